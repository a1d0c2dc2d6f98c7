export {};
export * from './ec2/index.js';
export * from './kube-apiserver/index.js';
