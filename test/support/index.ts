export {};
export * from './ec2/index.js';
