// Type-aware lint for every package; each package runs `eslint .` from its own folder.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
    // A function that needs scrolling is two functions (STYLE.md). Test files are left out: a
    // `describe` block's callback is the list of its tests, not a function to read as one.
    files: ['apps/**', 'packages/**', 'bench/**'],
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
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
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
