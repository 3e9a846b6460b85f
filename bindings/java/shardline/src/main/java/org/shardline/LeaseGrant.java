package org.shardline;

/**
 * A granted coordinator lease.
 *
 * @param token the fencing token: strictly greater than every token granted before under the
 *     same lease name, to any holder
 * @param validUntilMs the holder's own monotonic deadline; it stops acting then, whatever
 *     happens
 */
public record LeaseGrant(long token, long validUntilMs) {}
