//! One small chart of each kind, pinned as SVG text so a change to the renderer shows up as a
//! reviewable diff (`cargo insta review`).

mod common;

use attnlab_render::svg::render;

#[test]
fn line_chart() {
    insta::assert_snapshot!(render(&common::line_chart()).unwrap());
}

#[test]
fn bar_chart() {
    insta::assert_snapshot!(render(&common::bar_chart()).unwrap());
}

#[test]
fn heatmap() {
    insta::assert_snapshot!(render(&common::heatmap()).unwrap());
}
