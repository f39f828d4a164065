//! `instr`: reports, flame graphs and diffs of the agent's profiles (`instr --help`, `instr_cli::instr`).

fn main() -> std::process::ExitCode {
    instr_cli::instr::main()
}
