import { createContext, useContext } from 'react';
import type { FleetClient } from '../graphql/client.js';
import type { Role } from '../graphql/generated.js';

export interface Session {
  client: FleetClient;
  viewer: { name: string; role: Role; scoped: boolean };
  /** OPERATOR and ADMIN change clusters; a VIEWER is offered nothing that would be refused. */
  canMutate: boolean;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}
