//! The agents: for each role, how its prompt is built and how its answer is parsed. Pure
//! functions over data: no I/O, no provider, no state. The campaign runner sends the requests
//! and records the answers.
//!
//! Every agent works in its own context: a request carries only what that role needs
//! (the Translation agent sees one unit; the Proofreading agent one batch of units of one
//! chapter; the Manager only its compact context and a findings summary).

pub mod bounds;
pub mod brief;
pub mod brief_parts;
pub mod glossary;
pub mod json;
pub mod manager;
pub mod mask;
pub mod proofreading;
pub mod reconcile;
pub mod shares;
pub mod translation;

use serde::{Deserialize, Serialize};

use crate::llm::Task;

/// Version of all prompt templates. Part of the campaign fingerprint: changing a prompt makes
/// a new campaign state rather than mixing answers to two different prompts.
pub const PROMPT_VERSION: &str = "2026-11-29.2";

/// The four roles of the editorial team, plus the experiment's judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    Glossary,
    Translation,
    Proofreading,
    Manager,
    /// The blinded pairwise judge of `booktr experiment` (its prompts and parsing live with the
    /// experiment).
    /// Not a role of the team: it is not in [`Agent::ALL`] and never part of a campaign run.
    Judge,
}

impl Agent {
    pub const ALL: [Agent; 4] = [
        Agent::Glossary,
        Agent::Translation,
        Agent::Proofreading,
        Agent::Manager,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Glossary => "glossary",
            Agent::Translation => "translation",
            Agent::Proofreading => "proofreading",
            Agent::Manager => "manager",
            Agent::Judge => "judge",
        }
    }

    /// The agent a request's task tag names (the inverse of `Task::from(agent)`); `None` for
    /// a tag that is no agent's.
    pub fn of_task(task: Task) -> Option<Agent> {
        [Agent::Judge]
            .into_iter()
            .chain(Agent::ALL)
            .find(|a| a.as_str() == task.name())
    }
}

/// Every request an agent builds is tagged with the agent's name ([`Agent::as_str`]).
impl From<Agent> for Task {
    fn from(a: Agent) -> Task {
        Task::new(a.as_str())
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_round_trips_through_its_task_tag() {
        for a in Agent::ALL.into_iter().chain([Agent::Judge]) {
            let t = Task::from(a);
            assert_eq!(t.name(), a.as_str());
            assert_eq!(Agent::of_task(t), Some(a));
        }
        assert_eq!(Task::from(Agent::Translation).to_string(), "translation");
        assert_eq!(Agent::of_task(Task::new("summarise")), None);
    }
}
