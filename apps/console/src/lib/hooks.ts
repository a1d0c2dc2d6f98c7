import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../graphql/client.js';
import type { TypedDocumentString } from '../graphql/generated.js';
import { useSession } from './session-context.js';

export interface QueryState<R> {
  data: R | undefined;
  error: ApiError | undefined;
  loading: boolean;
  refetch: () => void;
  /** Replaces the data in place (a mutation's answer, a subscription's event). */
  setData: (update: (data: R | undefined) => R | undefined) => void;
}

const asApiError = (err: unknown) =>
  err instanceof ApiError
    ? err
    : new ApiError(err instanceof Error ? err.message : String(err), undefined, undefined);

/** Runs the query whenever its variables change; an answer to an older request is dropped. */
export function useQuery<R, V>(document: TypedDocumentString<R, V>, variables: V): QueryState<R> {
  const { client } = useSession();
  const key = JSON.stringify(variables);
  const [data, setData] = useState<R>();
  const [error, setError] = useState<ApiError>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const id = ++latest.current;
    setLoading(true);
    const vars = JSON.parse(key) as V;
    // The first ask may find its answer already on the way (fetched ahead on load).
    (client.takePrefetched(document, vars) ?? client.request(document, vars))
      .then((result) => {
        if (id !== latest.current) return;
        setData(result);
        setError(undefined);
      })
      .catch((err: unknown) => {
        if (id === latest.current) setError(asApiError(err));
      })
      .finally(() => {
        if (id === latest.current) setLoading(false);
      });
  }, [client, document, key, tick]);
  const refetch = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, refetch, setData };
}

/** Keeps a subscription open while mounted (and its variables unchanged). */
export function useSubscription<R, V>(
  document: TypedDocumentString<R, V>,
  variables: V,
  onData: (data: R) => void,
): ApiError | undefined {
  const { client } = useSession();
  const key = JSON.stringify(variables);
  const handler = useRef(onData);
  handler.current = onData;
  const [error, setError] = useState<ApiError>();
  useEffect(
    () =>
      client.subscribe(
        document,
        JSON.parse(key) as V,
        (data) => {
          setError(undefined);
          handler.current(data);
        },
        setError,
      ),
    [client, document, key],
  );
  return error;
}

/** A mutation with its pending flag and the API's refusal kept for display. */
export function useMutation<R, V>(document: TypedDocumentString<R, V>) {
  const { client } = useSession();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiError>();
  const run = useCallback(
    async (variables: V): Promise<R | undefined> => {
      setPending(true);
      setError(undefined);
      try {
        return await client.request(document, variables);
      } catch (err) {
        setError(asApiError(err));
        return undefined;
      } finally {
        setPending(false);
      }
    },
    [client, document],
  );
  const reset = useCallback(() => setError(undefined), []);
  return { run, pending, error, reset };
}
