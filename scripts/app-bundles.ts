// How `npm run build` bundles each app (scripts/build.ts), shared with the tests that check the
// bundles (tests/deploy).
import type { BuildOptions, Plugin } from 'esbuild';
import { embedLuaFiles } from './lua-files-plugin.js';

export const APPS = ['ingress', 'worker', 'recorder', 'dashboard', 'send'] as const;
export type BundledApp = (typeof APPS)[number];

/** Leaves every bare import to node_modules except the workspace's own packages. */
const externalDependencies: Plugin = {
  name: 'external-dependencies',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@pw/') ? undefined : { path: args.path, external: true },
    );
  },
};

/** The esbuild options of one app's bundle, `apps/<app>/dist/main.js`, paths from the root. */
export const appBundle = (app: BundledApp, root = '.'): BuildOptions => ({
  write: false,
  absWorkingDir: root,
  entryPoints: [`apps/${app}/src/main.ts`],
  outfile: `apps/${app}/dist/main.js`,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [externalDependencies, embedLuaFiles],
});
