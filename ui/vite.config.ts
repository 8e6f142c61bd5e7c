/// <reference types="vitest/config" />
// Vite builds the console into dist/, which `cargo build` embeds into the sextant binary
// (crates/sextant-server/build.rs). JSX is compiled by esbuild for Preact: no framework plugin.
import { defineConfig } from 'vite';

declare const process: { env: Record<string, string | undefined> };

export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    target: 'es2022',
    // One small bundle; the server's CSP allows only same-origin scripts, so nothing inline.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    // `npm run dev` against a running `sextant serve` (the API is same-origin through the proxy).
    proxy: { '/api': { target: process.env.SEXTANT_URL ?? 'http://127.0.0.1:9900', changeOrigin: false } },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
  },
});
