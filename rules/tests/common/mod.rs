//! What the section tests share: a rules file that must parse, and one that must be refused.

use instr_rules::Rules;

pub fn parse(text: &str) -> Rules {
    Rules::parse(text, "rules.yaml").unwrap_or_else(|error| panic!("{error}"))
}

pub fn reject(text: &str) -> String {
    Rules::parse(text, "rules.yaml")
        .expect_err("should be rejected")
        .to_string()
}
