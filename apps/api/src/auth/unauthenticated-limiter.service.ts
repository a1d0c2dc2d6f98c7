import { Inject, Injectable } from '@nestjs/common';
import { API_CONFIG, type ApiConfig } from '../config.js';

/** Addresses remembered at once; the oldest window is forgotten first beyond this. */
const MAX_ADDRESSES = 10_000;

/**
 * Bounds what callers without a valid credential can make the API do (database look-ups of bogus
 * secrets): each peer address gets UNAUTHENTICATED_PER_WINDOW refusals per window, then its
 * unknown credentials are refused before any look-up. Only refusals count, so authenticated
 * traffic from one address (a load generator, sidecars behind one egress) never uses the budget,
 * and a credential the API already knows is valid is never refused here. Kept per replica in
 * memory: it must hold when Redis does not.
 */
@Injectable()
export class UnauthenticatedLimiter {
  private readonly windows = new Map<string, { start: number; refused: number }>();

  constructor(@Inject(API_CONFIG) private readonly config: ApiConfig) {}

  private window(address: string, now: number) {
    const current = this.windows.get(address);
    if (current && now - current.start < this.config.UNAUTHENTICATED_WINDOW_SECONDS * 1000) {
      return current;
    }
    this.windows.delete(address);
    if (this.windows.size >= MAX_ADDRESSES) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    const fresh = { start: now, refused: 0 };
    this.windows.set(address, fresh);
    return fresh;
  }

  /** Seconds until `address` may present unknown credentials again; 0 when it may now. */
  retryAfter(address: string, now = Date.now()): number {
    const w = this.windows.get(address);
    if (!w || w.refused < this.config.UNAUTHENTICATED_PER_WINDOW) return 0;
    const left = w.start + this.config.UNAUTHENTICATED_WINDOW_SECONDS * 1000 - now;
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /** One request from `address` refused for want of a valid credential. */
  refused(address: string, now = Date.now()): void {
    this.window(address, now).refused++;
  }
}
