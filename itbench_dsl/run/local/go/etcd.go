package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd server (etcd's embed package) until SIGTERM or SIGINT. With
// --cert-file, --key-file and --trusted-ca-file it serves clients and peers over TLS and, with
// --client-cert-auth, answers only clients whose certificate the trusted CA signed.
func runEtcd(args []string) int {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "directory of etcd's data (required)")
	client := fs.String("listen-client", "http://127.0.0.1:2379", "URL to serve clients on")
	peer := fs.String("listen-peer", "http://127.0.0.1:2380", "URL to serve peers on")
	certFile := fs.String("cert-file", "", "the server's TLS certificate (https URLs)")
	keyFile := fs.String("key-file", "", "the key of --cert-file")
	trustedCA := fs.String("trusted-ca-file", "", "the CA that signs the clients' certificates")
	clientCertAuth := fs.Bool("client-cert-auth", false, "refuse clients without a certificate of --trusted-ca-file")
	readyTimeout := fs.Duration("ready-timeout", time.Minute, "how long to wait for the server to be ready")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}
	clientURL, err := url.Parse(*client)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-client: %v\n", err)
		return 2
	}
	peerURL, err := url.Parse(*peer)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-peer: %v\n", err)
		return 2
	}
	cfg := embed.NewConfig()
	cfg.Name = "local"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if *certFile != "" {
		tls := transport.TLSInfo{CertFile: *certFile, KeyFile: *keyFile, TrustedCAFile: *trustedCA,
			ClientCertAuth: *clientCertAuth}
		cfg.ClientTLSInfo = tls
		cfg.PeerTLSInfo = tls
	}
	cfg.UnsafeNoFsync = true // a throw-away cluster: speed over durability
	cfg.LogLevel = "warn"

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready on %s\n", clientURL)
	case <-time.After(*readyTimeout):
		fmt.Fprintf(os.Stderr, "etcd: not ready after %s\n", *readyTimeout)
		return 1
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		fmt.Fprintf(os.Stderr, "etcd: %s, stopping\n", sig)
		return 0
	case err := <-server.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
}
