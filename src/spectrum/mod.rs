//! Periods, resolution, decay and precision of rotary frequency sets (being written).
