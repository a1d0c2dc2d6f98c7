export * from './ec2-emulator.js';
export * from './world.js';
export { verifySigV4, type SigV4Credentials, type AuthRejection } from './sigv4.js';
