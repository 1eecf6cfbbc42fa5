package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A client certificate the control plane's components and its admin present to the API server.
type clientCert struct {
	file   string
	user   string
	groups []string
}

var clientCerts = []clientCert{
	{"admin", "itbench-admin", []string{"system:masters"}},
	{"controller-manager", "system:kube-controller-manager", nil},
	{"scheduler", "system:kube-scheduler", nil},
	{"kwok", "kwok-controller", []string{"system:masters"}},
}

// runCerts writes, into --dir, a CA (ca.crt, ca.key), the API server's serving certificate
// (apiserver.crt/.key, for 127.0.0.1, localhost and the in-cluster names), the service-account
// signing key (sa.key, sa.pub), one client certificate per user of clientCerts (NAME.crt/.key), and
// etcd's own PKI in etcd/ (see writeEtcdCerts).
func runCerts(args []string) int {
	fs := flag.NewFlagSet("certs", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to write into (required)")
	serviceIP := fs.String("service-ip", "10.96.0.1", "the kubernetes Service's cluster IP (a SAN of the serving certificate)")
	validity := fs.Duration("validity", 365*24*time.Hour, "how long the certificates are valid")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "certs: --dir is required")
		return 2
	}
	if err := writeCerts(*dir, net.ParseIP(*serviceIP), *validity); err != nil {
		fmt.Fprintf(os.Stderr, "certs: %v\n", err)
		return 1
	}
	return 0
}

func writeCerts(dir string, serviceIP net.IP, validity time.Duration) error {
	if serviceIP == nil {
		return fmt.Errorf("--service-ip is not an IP address")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := time.Now().Add(-time.Minute)
	caKey, err := newKey()
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "itbench-local-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caCert, err := sign(dir, "ca", caTemplate, caKey, nil, nil)
	if err != nil {
		return err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now,
		NotAfter:    now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), serviceIP},
	}
	servingKey, err := newKey()
	if err != nil {
		return err
	}
	if _, err := sign(dir, "apiserver", serving, servingKey, caCert, caKey); err != nil {
		return err
	}
	for _, c := range clientCerts {
		key, err := newKey()
		if err != nil {
			return err
		}
		template := &x509.Certificate{
			Subject:     pkix.Name{CommonName: c.user, Organization: c.groups},
			NotBefore:   now,
			NotAfter:    now.Add(validity),
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if _, err := sign(dir, c.file, template, key, caCert, caKey); err != nil {
			return err
		}
	}
	if err := writeEtcdCerts(filepath.Join(dir, "etcd"), now, validity); err != nil {
		return err
	}
	saKey, err := newKey()
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), saKey); err != nil {
		return err
	}
	public, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", public, 0o644)
}

// writeEtcdCerts writes into dir (mode 0700, every file 0600) a CA of etcd's own (ca.crt, ca.key),
// etcd's serving certificate for 127.0.0.1 (server.crt/.key) and the one client certificate etcd
// accepts (client.crt/.key, the API server's). A CA apart from the cluster's: no certificate of the
// cluster's users opens etcd.
func writeEtcdCerts(dir string, now time.Time, validity time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	caKey, err := newKey()
	if err != nil {
		return err
	}
	caCert, err := signPrivate(dir, "ca", &x509.Certificate{
		Subject:   pkix.Name{CommonName: "itbench-local-etcd-ca"},
		NotBefore: now, NotAfter: now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, caKey, nil, nil)
	if err != nil {
		return err
	}
	leaves := []*x509.Certificate{
		{Subject: pkix.Name{CommonName: "etcd"}, DNSNames: []string{"localhost"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			// server and client: the certificate serves peers too
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{Subject: pkix.Name{CommonName: "kube-apiserver-etcd-client"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	}
	for i, name := range []string{"server", "client"} {
		key, err := newKey()
		if err != nil {
			return err
		}
		leaves[i].NotBefore, leaves[i].NotAfter = now, now.Add(validity)
		leaves[i].KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		if _, err := signPrivate(dir, name, leaves[i], key, caCert, caKey); err != nil {
			return err
		}
	}
	return nil
}

// signPrivate is sign with the certificate, too, readable by its owner only.
func signPrivate(dir, name string, template *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, error) {
	cert, err := sign(dir, name, template, key, parent, parentKey)
	if err != nil {
		return nil, err
	}
	return cert, os.Chmod(filepath.Join(dir, name+".crt"), 0o600)
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// sign makes the certificate of template for key, signed by parent (self-signed when parent is nil),
// and writes NAME.crt and NAME.key.
func sign(dir, name string, template *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("%s: %w", strings.TrimSpace(path), err)
	}
	return nil
}
