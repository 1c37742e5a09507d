// eslint for the page and its Node unit tests (scripts/test runs it; `npx eslint` by hand).
// Flat config: the recommended rules, with the globals each kind of file really has.

import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", ".venv/", "build/"] },
  js.configs.recommended,
  {
    files: ["web/**/*.js"],
    ignores: ["web/pcm-worklet.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
  },
  {
    // Runs in the AudioWorkletGlobalScope: no window or document, but registerProcessor.
    files: ["web/pcm-worklet.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.audioWorklet },
  },
  {
    files: ["tests/**/*.js", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
