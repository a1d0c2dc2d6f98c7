import { SetMetadata } from '@nestjs/common';
import type { Role } from './principal.js';

export const REQUIRED_ROLE = 'fleet:required-role';
export const PUBLIC_ENDPOINT = 'fleet:public';

/** The least role that may call this resolver or route. Without it the global guard refuses. */
export const RequireRole = (role: Role) => SetMetadata(REQUIRED_ROLE, role);

/** Routes with their own authentication (sidecar reports) or none (health probes). */
export const Public = () => SetMetadata(PUBLIC_ENDPOINT, true);
