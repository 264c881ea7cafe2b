//! The board as data: the file as text (document, entries), the frontmatter's YAML tree, its
//! typed fields and their registry, and the data the frontmatter carries (checks, objection
//! ledger, SLAs, pins, the journal). Nothing here judges a change or touches the disk.

pub mod checks;
pub mod debate;
pub mod depend;
pub mod dissent;
pub mod document;
pub mod entry;
pub mod field;
pub mod format;
pub mod frontmatter;
pub mod handoff;
pub mod journal;
pub mod ledger;
pub mod pool;
pub mod rewrite;
pub mod sla;
pub mod suggest;
pub mod transcript;
pub mod yaml;
pub mod yaml_plain;
