import type { z } from 'zod';

/** `spec.template.spec.providerSpec.value.blockDevices[0].ebs.volumeSize: <zod message>` */
export function describeIssues(error: z.ZodError, prefix: string): string {
  return error.issues
    .map((issue) => {
      let path = prefix;
      for (const segment of issue.path) {
        path +=
          typeof segment === 'number'
            ? `[${segment}]`
            : `${path === '' ? '' : '.'}${String(segment)}`;
      }
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
