//! `attnlab rope …` (being written).

use clap::Subcommand;

use super::Outcome;

#[derive(Debug, Subcommand)]
pub enum RopeCommand {}

pub fn run(cmd: RopeCommand) -> anyhow::Result<Outcome> {
    match cmd {}
}
