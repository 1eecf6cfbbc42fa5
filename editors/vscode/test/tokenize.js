// Tokenize .itb files with the TextMate engine VS Code uses (vscode-textmate + vscode-oniguruma),
// and print, per file and line, the tokens as [start, end, scopes]. tests/test_textmate.py runs it.
//
//   npm install            (in editors/vscode: the devDependencies)
//   node test/tokenize.js FILE...
"use strict";

const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const grammarPath = path.join(__dirname, "..", "syntaxes", "itbench.tmLanguage.json");
const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;

async function main(files) {
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === "source.itb"
        ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath)
        : null,
  });
  const grammar = await registry.loadGrammar("source.itb");
  const out = {};
  for (const file of files) {
    let stack = vsctm.INITIAL;
    const lines = fs.readFileSync(file, "utf8").split(/\r\n|\r|\n/);
    out[file] = lines.map((line) => {
      const result = grammar.tokenizeLine(line, stack);
      stack = result.ruleStack;
      return result.tokens.map((t) => [t.startIndex, Math.min(t.endIndex, line.length), t.scopes]);
    });
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(2);
});
