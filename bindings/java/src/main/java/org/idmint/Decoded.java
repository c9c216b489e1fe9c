// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;

/**
 * One snowflake ID taken apart by {@link Idmint#decode(Layout, long)}.
 *
 * @param timeUnits the time field as stored
 * @param time the start of its time unit (epoch + timeUnits * unit)
 * @param region the region bits
 * @param worker the worker id
 * @param sequence the sequence within the unit
 */
public record Decoded(long timeUnits, Instant time, int region, int worker, long sequence) {}
