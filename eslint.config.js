// Type-aware lint of the whole repository in one run (`npm run lint`, from the root): one
// TypeScript program over every package (tsconfig.all.json), so the shared sources are read once.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'bench/results.json',
      'bench/profiles/**',
      'test-artifacts/**',
      '.data/**',
      '.turbo/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.all.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Module boundaries: apps never import each other, packages never import apps.
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['**/apps/**', '../../apps/*'], message: 'apps are not importable' }],
        },
      ],
    },
  },
  {
    // A function that needs scrolling is two functions (STYLE.md), in tests as well: a long
    // `describe` is split by behaviour, a long `it` into named steps.
    files: ['apps/**', 'packages/**', 'bench/**', 'tests/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // The repository's own scripts (npm start, build, docs) drive the apps by design.
    files: ['scripts/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['apps/dashboard/console/**'],
    languageOptions: {
      parserOptions: {
        project: ['./apps/dashboard/console/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
