//! The book: chapters read from disk and cut into translation units.
//!
//! - [`markdown`] owns the one set of pulldown-cmark options every parser in booktr uses.
//! - [`chapter`] loads chapter files (UTF-8 checked, BOM and CRLF kept byte for byte).
//! - [`notebook`] reads Jupyter notebooks (`*.ipynb`): their Markdown cells are the chapter's
//!   text, everything else is kept.
//! - [`sentences`] finds sentence boundaries inside one block, to split a block too large for
//!   the model.
//! - [`segment`] cuts a chapter into [`segment::Unit`]s at top-level block boundaries, such that
//!   joining the units gives back the chapter byte for byte.
//!
//! - [`anchors`] makes heading ids as a site's tool does, and says which ids a translation
//!   keeps.
//! - [`includes`] finds the files a chapter pulls in at build time (mdBook includes, MkDocs
//!   snippets, Docusaurus partials).
//! - [`links`] resolves a site's internal links to chapters, anchors and files as the site's
//!   tool does.
//! - [`mdx`] tells the ESM and JSX of `.mdx` chapters from their prose.
//! - [`site`] reads book layouts (mdBook `SUMMARY.md`, MkDocs `mkdocs.yml`, Docusaurus
//!   `docs/`) into chapter files in book order and their places in the translated site.
//! - [`syntax`] finds the syntax of Markdown extensions and site plugins that a translation
//!   keeps byte for byte.
//!
//! Nothing here talks to a model or writes state.

pub mod align;
pub mod anchors;
pub mod chapter;
pub mod includes;
pub mod links;
pub mod markdown;
pub mod mdx;
pub mod notebook;
pub mod segment;
pub mod sentences;
pub mod site;
pub mod syntax;

pub use chapter::Chapter;
pub use segment::{Unit, UnitKind, segment};
