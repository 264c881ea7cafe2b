//! How `pair` talks to people: the colour, quiet and verbose settings of the command line.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`: when to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal, unless `NO_COLOR` is set or `TERM=dumb`
    /// (`CLICOLOR_FORCE` forces it on).
    #[default]
    Auto,
    /// Always colour, whatever stdout is and whatever the environment says.
    Always,
    /// Never colour.
    Never,
}

/// The output settings of one run, chosen on the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    pub color: ColorChoice,
    /// `-q`: print only errors.
    pub quiet: bool,
    /// `-v`: say what was read, checked and written, with timings, on stderr.
    pub verbose: bool,
    /// `--json`: the machine-readable result.
    pub json: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Record the settings of this run (the first call wins; the binary makes it once, after
/// parsing the command line).
pub fn init(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// The settings of this run (the defaults when [`init`] was never called).
pub fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or_default()
}

/// Whether to colour what goes to stdout.
pub fn color_stdout() -> bool {
    use_color(
        settings().color,
        std::io::stdout().is_terminal(),
        |name: &str| std::env::var_os(name),
    )
}

/// The colour decision: `--color always`/`never` win; otherwise a non-empty `NO_COLOR` turns
/// colour off (<https://no-color.org>), a `CLICOLOR_FORCE` other than empty or `0` turns it on,
/// `TERM=dumb` turns it off, and else it is on exactly when the output is a terminal.
pub fn use_color(
    choice: ColorChoice,
    is_terminal: bool,
    env: impl Fn(&str) -> Option<OsString>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else if env("TERM").is_some_and(|v| v == "dumb") {
                false
            } else {
                is_terminal
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_flag_then_no_color_then_clicolor_force_then_term() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        use ColorChoice::*;
        assert!(use_color(Auto, true, env(&[])));
        assert!(!use_color(Auto, false, env(&[])));
        assert!(!use_color(Auto, true, env(&[("NO_COLOR", "1")])));
        assert!(use_color(Auto, true, env(&[("NO_COLOR", "")])));
        assert!(use_color(Auto, false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!use_color(Auto, false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(!use_color(
            Auto,
            false,
            env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])
        ));
        assert!(!use_color(Auto, true, env(&[("TERM", "dumb")])));
        assert!(use_color(Always, false, env(&[("NO_COLOR", "1")])));
        assert!(!use_color(Never, true, env(&[("CLICOLOR_FORCE", "1")])));
    }
}
