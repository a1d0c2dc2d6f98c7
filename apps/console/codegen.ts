import type { CodegenConfig } from '@graphql-codegen/cli';

// Operation types come from the committed schema.gql, so the console cannot drift from the API
// without the build (which regenerates this) or `npm run check` noticing.
const config: CodegenConfig = {
  schema: 'apps/api/src/schema.gql',
  documents: 'apps/console/src/graphql/operations.graphql',
  generates: {
    'apps/console/src/graphql/generated.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        // Plain strings: no graphql-js AST or printer in the browser bundle.
        documentMode: 'string',
        enumsAsTypes: true,
        useTypeImports: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        scalars: { DateTime: 'string', JSON: 'unknown' },
      },
    },
  },
  hooks: { afterAllFileWrite: ['prettier --write'] },
};
export default config;
