//! Rectangles and segments in canvas pixels (y grows downwards, as in SVG).

/// An axis-aligned rectangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width (≥ 0).
    pub w: f64,
    /// Height (≥ 0).
    pub h: f64,
}

impl Rect {
    /// The rectangle with these edges (a negative extent is clamped to 0).
    pub fn ltrb(left: f64, top: f64, right: f64, bottom: f64) -> Self {
        Rect {
            x: left,
            y: top,
            w: (right - left).max(0.0),
            h: (bottom - top).max(0.0),
        }
    }

    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Horizontal centre.
    pub fn cx(&self) -> f64 {
        self.x + 0.5 * self.w
    }

    /// Vertical centre.
    pub fn cy(&self) -> f64 {
        self.y + 0.5 * self.h
    }

    /// Grown by `d` on every side (shrunk for negative `d`).
    pub fn inflate(&self, d: f64) -> Self {
        Rect::ltrb(self.x - d, self.y - d, self.right() + d, self.bottom() + d)
    }

    /// The interiors overlap (touching edges do not count).
    pub fn intersects(&self, o: &Rect) -> bool {
        self.x < o.right() && o.x < self.right() && self.y < o.bottom() && o.y < self.bottom()
    }

    /// `o` lies entirely inside (edges included).
    pub fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x - 1e-9
            && o.y >= self.y - 1e-9
            && o.right() <= self.right() + 1e-9
            && o.bottom() <= self.bottom() + 1e-9
    }

    /// The segment from `a` to `b` passes through the rectangle (Liang–Barsky clipping: the
    /// parameter interval of the segment inside all four half-planes is non-empty).
    pub fn hits_segment(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x),
            (dx, self.right() - a.0),
            (-dy, a.1 - self.y),
            (dy, self.bottom() - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
                if t0 > t1 {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_through_crossing_and_beside() {
        let r = Rect::ltrb(10.0, 10.0, 20.0, 20.0);
        assert!(r.hits_segment((0.0, 15.0), (30.0, 15.0)));
        assert!(r.hits_segment((12.0, 12.0), (13.0, 13.0)));
        assert!(!r.hits_segment((0.0, 0.0), (30.0, 5.0)));
        assert!(!r.hits_segment((0.0, 30.0), (9.0, 0.0)));
        assert!(r.hits_segment((0.0, 30.0), (30.0, 0.0)));
        assert!(r.intersects(&Rect::ltrb(19.0, 19.0, 25.0, 25.0)));
        assert!(!r.intersects(&Rect::ltrb(20.0, 10.0, 25.0, 25.0)));
        assert!(r.inflate(1.0).contains(&r) && !r.contains(&r.inflate(1.0)));
    }
}
