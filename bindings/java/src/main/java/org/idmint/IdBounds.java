// SPDX-License-Identifier: Apache-2.0
package org.idmint;

/**
 * The lowest and highest ID whose time falls in a window: every ID minted in the window lies in
 * [lo, hi], so a query by time is a range scan on the ID ({@code WHERE id BETWEEN lo AND hi}).
 *
 * @param lo the lowest such ID
 * @param hi the highest such ID
 */
public record IdBounds(long lo, long hi) {}
