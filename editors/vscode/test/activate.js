// Load extension.js with stand-ins for the `vscode` API and vscode-languageclient, activate it,
// and print what it asked for: the server command, its arguments and the document selector.
// tests/test_textmate.py runs it (node only; no npm packages needed).
"use strict";

const Module = require("module");
const path = require("path");

const settings = JSON.parse(process.argv[2] || "{}");
const recorded = { clients: [], warnings: [], started: 0 };

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    recorded.clients.push({ id, name, serverOptions, clientOptions: { documentSelector: clientOptions.documentSelector } });
  }
  start() {
    recorded.started += 1;
    return Promise.resolve();
  }
  stop() {
    return Promise.resolve();
  }
  dispose() {}
}

const vscode = {
  workspace: {
    getConfiguration: (section) => ({
      get: (key, fallback) => (`${section}.${key}` in settings ? settings[`${section}.${key}`] : fallback),
    }),
    createFileSystemWatcher: (glob) => ({ glob, dispose() {} }),
  },
  window: { showWarningMessage: (message) => recorded.warnings.push(message) },
};

const stubs = { vscode, "vscode-languageclient/node": { LanguageClient } };
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request in stubs) {
    return stubs[request];
  }
  return load.call(this, request, parent, isMain);
};

const extension = require(path.join(__dirname, "..", "extension.js"));
const context = { subscriptions: [] };
Promise.resolve(extension.activate(context)).then(() => {
  recorded.subscriptions = context.subscriptions.length;
  process.stdout.write(JSON.stringify(recorded));
});
