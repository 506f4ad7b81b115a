//! A campaign: its loaded inputs, its persisted state and the Manager that drives it, in two
//! layers, the way cargo splits `core/` and `ops/`:
//!
//! - [`core`]: the campaign, its store and journal, the state rebuilt from them, the Manager
//!   and the commit protocol. It imports nothing from `ops`.
//! - [`ops`]: what is done with a campaign: the run loop and batch mode, plan's estimate and
//!   the budget gate, the editor's desk, outputs, translation memory, interchange exports and
//!   imports. Operations use the core; results are recorded through [`core::commit`].

pub mod core;
pub mod ops;

pub use core::Campaign;
pub use core::state::State;
pub use core::summary::Summary;
