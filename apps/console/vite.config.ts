import { defineConfig } from 'vite';

// Paths are relative to the repository root, where scripts/build.mjs runs Vite. The output,
// dist/apps/console, is what the API serves at / and what the container image carries.
// No @vitejs/plugin-react: Vite's own transform compiles JSX, and Fast Refresh is of no use to a
// console that is only ever built.
export default defineConfig({
  root: 'apps/console',
  base: '/',
  build: {
    outDir: '../../dist/apps/console',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1000,
  },
  oxc: { jsx: { runtime: 'automatic' } },
  logLevel: 'warn',
});
