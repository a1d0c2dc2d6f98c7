import { describe, expect, it } from '@jest/globals';
import { awsClientConfig, ec2CallDeadlineMs } from './credentials.js';

describe('awsClientConfig: every EC2 request has a deadline', () => {
  it('sets request and connection timeouts that throw, 10 s by default', () => {
    expect(awsClientConfig({}, 'us-east-1').requestHandler).toEqual({
      connectionTimeout: 5_000,
      requestTimeout: 10_000,
      throwOnRequestTimeout: true,
    });
    expect(ec2CallDeadlineMs({})).toBe(32_000);
  });

  it('takes EC2_REQUEST_TIMEOUT_SECONDS, and names it when it is wrong', () => {
    expect(
      awsClientConfig({ EC2_REQUEST_TIMEOUT_SECONDS: '2' }, 'us-east-1').requestHandler,
    ).toMatchObject({ connectionTimeout: 2_000, requestTimeout: 2_000 });
    expect(ec2CallDeadlineMs({ EC2_REQUEST_TIMEOUT_SECONDS: '2' })).toBe(8_000);
    expect(() => awsClientConfig({ EC2_REQUEST_TIMEOUT_SECONDS: '0' }, 'us-east-1')).toThrow(
      'EC2_REQUEST_TIMEOUT_SECONDS: must be a positive number of seconds',
    );
    expect(() => ec2CallDeadlineMs({ EC2_REQUEST_TIMEOUT_SECONDS: 'soon' })).toThrow(
      /^EC2_REQUEST_TIMEOUT_SECONDS: /,
    );
  });
});
