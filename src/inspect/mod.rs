//! Reading a scene without rendering it: its timeline as text or JSON ([`plan`]), and warnings
//! for scenes that would render but show nothing, or loop with a jump ([`advice`]).

pub mod advice;
pub mod plan;
