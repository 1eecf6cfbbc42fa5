// The ITBench extension: the grammar and language configuration are declared in package.json;
// this file starts `itbench lsp` (diagnostics, hover, completion, formatting) for .itb files.
// Plain CommonJS: nothing to compile; `npm install --omit=dev` brings in vscode-languageclient.
"use strict";

const vscode = require("vscode");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("itbench");
  if (!config.get("server.enabled", true)) {
    return undefined;
  }
  let LanguageClient;
  try {
    ({ LanguageClient } = require("vscode-languageclient/node"));
  } catch (error) {
    vscode.window.showWarningMessage(
      "ITBench: run `npm install --omit=dev` in the extension folder to enable the language server " +
        "(syntax highlighting works without it).");
    return undefined;
  }
  const command = config.get("server.command", "itbench");
  const args = config.get("server.args", ["lsp"]);
  const server = { command, args };
  client = new LanguageClient(
    "itbench",
    "ITBench language server",
    { run: server, debug: server },
    {
      documentSelector: [{ language: "itbench" }],
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.itb") },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
