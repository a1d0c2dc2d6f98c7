export {};
export * from './ec2/index.js';
export * from './database.js';
export * from './graphql-client.js';
export * from './fixtures.js';
export * from './processes.js';
export * from './kube-apiserver/index.js';
export * from './pkcs10.js';
export * from './graphql-ws-client.js';
