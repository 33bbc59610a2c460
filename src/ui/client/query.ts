/**
 * TanStack Query core as the pages use it: one QueryClient for the tab; a page observes the
 * queries it shows (QueryObserver, with a refetch interval) and unsubscribes when it goes, so
 * nothing is fetched for a page that is not shown, nor while the tab is hidden (the interval
 * pauses in the background).
 */
import { QueryClient, QueryObserver, type QueryObserverResult } from '@tanstack/query-core';
import { getJson } from './api';

export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, staleTime: 1000, refetchIntervalInBackground: false } },
});
queryClient.mount();

/** How often the pages poll (ms): often enough to look live, rarely enough to cost nothing. */
export const POLL_MS = 2000;

/**
 * Observe one endpoint: `onResult` gets every result (data or error). Returns the unsubscribe
 * (the page's cleanup).
 */
export function observe<T>(
  key: readonly unknown[],
  fetcher: () => Promise<T>,
  onResult: (r: QueryObserverResult<T, Error>) => void,
  refetchInterval: number | false = POLL_MS,
): () => void {
  const obs = new QueryObserver<T, Error>(queryClient, { queryKey: key, queryFn: fetcher, refetchInterval });
  const unsubscribe = obs.subscribe(onResult);
  onResult(obs.getCurrentResult());
  return unsubscribe;
}

/** Observe a /ui/api/<name> endpoint. */
export function observeApi<T>(
  name: string,
  onResult: (r: QueryObserverResult<T, Error>) => void,
  refetchInterval: number | false = POLL_MS,
) {
  return observe<T>([name], () => getJson<T>(name), onResult, refetchInterval);
}
