// The renderer's build: React, from renderer/ into dist/renderer, with relative asset URLs so the
// same build works under `tatra serve` (http://127.0.0.1:PORT/) and Electron's custom protocol.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    // No inline scripts or eval anywhere: the page's CSP forbids them.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
  },
  server: { port: 5179, strictPort: false },
});
