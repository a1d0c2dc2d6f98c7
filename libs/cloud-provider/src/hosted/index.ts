export * from './autonode.js';
export { AWS_HOSTED_DRIVER, AWS_HOSTED_PLATFORM_RULES, AwsHostedCloudProvider } from './driver.js';
