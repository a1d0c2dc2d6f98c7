import { describeRefusal, type ApiError } from '../../graphql/client.js';

/** The API's refusal at the form field it names (`input.<name>`), or null when it names none. */
export const fieldMessage = (error: ApiError | undefined, field: string) =>
  error?.field === field || error?.field?.startsWith(`${field}.`)
    ? describeRefusal(error)
    : undefined;
