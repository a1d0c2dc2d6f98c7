import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'libs/database/src/generated/**',
      'apps/console/src/graphql/generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            'scripts/*.mjs',
            'prisma.config.ts',
            'eslint.config.js',
            'jest.config.js',
          ],
          // scripts/ has grown past the default of 8 files linted without a tsconfig.
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16,
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Apps share code only through libs, by alias: no relative path climbing into another app
    // or a lib. Tests (test/**) may import apps: they drive them.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(apps|libs|test|api|worker|sidecar|cli)/',
              message:
                'apps never import other apps; share code through libs, imported as @fleet/*',
            },
          ],
        },
      ],
    },
  },
  {
    // What the sidecar sorts goes into its reports and their digests: the same order on every
    // machine, and no ICU collation tables mapped into a process that rests (issue 48, target 5).
    files: ['apps/sidecar/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { property: 'localeCompare', message: 'use compareCodeUnits from @fleet/contracts' },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
);
