export * from './autonode.js';
export { AWS_HOSTED_PLATFORM_RULES } from './registration.js';
export { AWS_HOSTED_DRIVER, AwsHostedCloudProvider } from './driver.js';
