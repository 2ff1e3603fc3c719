//! PowerShell 7 (`pwsh`) for the `PowerShell` tool: where it is, whether it is 7 or later,
//! and the `bash -c` line that hands it a script.
//!
//! Finding it costs a look along `PATH` (no process), so building a registry stays cheap;
//! its version is checked by the script's own prologue, inside the sandbox (`pwsh` is never
//! started outside it). The script is passed as `-EncodedCommand` (base64 of UTF-16LE), so no
//! quoting of ours or of the shell's can cut it; the leading `bash` `exec`s `pwsh`, so the
//! sandbox, the cgroup, the tree kill, timeouts, spill files and background tasks are
//! Bash's own.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use toolbelt_core::ToolError;

/// Why the tool is absent when `pwsh` is not found.
pub const MISSING: &str =
    "PowerShell 7 or later (`pwsh`) is not on PATH; install PowerShell 7 and start toolbelt again to use it";

/// The exit code of the prologue's refusal of an older PowerShell.
pub const TOO_OLD: i32 = 97;
/// What that refusal says.
pub const TOO_OLD_SAYS: &str = "the PowerShell tool needs PowerShell 7 or later";

/// What runs before the model's script: PowerShell 7 or nothing (an older one says so and
/// exits 97), no progress bars, no colour codes in the output. The version is checked here,
/// inside the sandbox, rather than by starting `pwsh` outside it.
const PROLOGUE: &str = concat!(
    "if ($PSVersionTable.PSVersion.Major -lt 7) { [Console]::Error.WriteLine(\"toolbelt: this is PowerShell ",
    "$($PSVersionTable.PSVersion); the PowerShell tool needs PowerShell 7 or later (pwsh)\"); exit 97 }\n",
    "$ProgressPreference = 'SilentlyContinue'\n",
    "if ($PSStyle) { $PSStyle.OutputRendering = 'PlainText' }\n",
);

/// `pwsh` on `PATH`, as an absolute path.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).filter(|dir| dir.is_absolute()).map(|dir| dir.join("pwsh")).find(|p| executable(p))
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Why the tool cannot be offered here, if it cannot.
pub fn unavailable() -> Option<String> {
    find().is_none().then(|| MISSING.to_string())
}

/// The `bash -c` line that runs `script` with `pwsh`: no profile, no prompts, text output.
pub fn command_line(pwsh: &Path, script: &str) -> String {
    let mut utf16 = Vec::with_capacity((PROLOGUE.len() + script.len()) * 2);
    for unit in PROLOGUE.encode_utf16().chain(script.encode_utf16()) {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(utf16);
    format!(
        "POWERSHELL_TELEMETRY_OPTOUT=1 POWERSHELL_UPDATECHECK=Off exec {} -NoProfile -NonInteractive -OutputFormat Text \
         -EncodedCommand {encoded}",
        quote(&pwsh.display().to_string())
    )
}

/// `text` as one bash word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The longest `bash -c` argument Linux takes (`MAX_ARG_STRLEN`), less room for the rest.
const MAX_LINE: usize = 128 * 1024 - 1024;

/// Fails when the encoded script would not fit in one argument, saying what to do instead.
pub fn check_length(line: &str, script: &str) -> Result<(), ToolError> {
    if line.len() <= MAX_LINE {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "the script is {} characters, more than one command line can carry once encoded (about 48,000); write it \
         to a .ps1 file (Write) and run that file (`& ./script.ps1`)",
        script.chars().count()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_survives_any_quoting_as_utf16_base64() {
        let script = "Write-Output 'it''s \"quoted\"'; $x = `$(rm -rf /)`; # ünïcode";
        let line = command_line(Path::new("/opt/power shell/pwsh"), script);
        assert!(line.starts_with(
            "POWERSHELL_TELEMETRY_OPTOUT=1 POWERSHELL_UPDATECHECK=Off exec '/opt/power shell/pwsh' -NoProfile \
             -NonInteractive -OutputFormat Text -EncodedCommand "
        ));
        let encoded = line.rsplit(' ').next().unwrap();
        assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "{encoded}");
        let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
        let units: Vec<u16> = bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        assert_eq!(String::from_utf16(&units).unwrap(), format!("{PROLOGUE}{script}"));
    }

    #[test]
    fn a_quote_in_the_path_stays_inside_the_word() {
        assert_eq!(quote("/a'b/pwsh"), r"'/a'\''b/pwsh'");
    }
}
