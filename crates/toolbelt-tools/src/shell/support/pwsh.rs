//! PowerShell 7 (`pwsh`) for the `PowerShell` tool: where it is, whether it is 7 or later,
//! and the `bash -c` line that hands it a script.
//!
//! Finding it costs a look along `PATH` (no process), so building a registry stays cheap;
//! its version costs a start of `pwsh` (hundreds of milliseconds), paid once per binary at
//! the first call. The script is passed as `-EncodedCommand` (base64 of UTF-16LE), so no
//! quoting of ours or of the shell's can cut it; the leading `bash` `exec`s `pwsh`, so the
//! sandbox, the cgroup, the tree kill, timeouts, spill files and background tasks are
//! Bash's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use toolbelt_core::ToolError;

/// Why the tool is absent when `pwsh` is not found.
pub const MISSING: &str =
    "PowerShell 7 or later (`pwsh`) is not on PATH; install PowerShell 7 and start toolbelt again to use it";

/// The oldest major version taken.
const OLDEST: u32 = 7;

/// What runs before the model's script: no progress bars, no colour codes in the output.
const PROLOGUE: &str =
    "$ProgressPreference = 'SilentlyContinue'\nif ($PSStyle) { $PSStyle.OutputRendering = 'PlainText' }\n";

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

/// Versions already read, by binary.
static VERSIONS: Mutex<Option<HashMap<PathBuf, u32>>> = Mutex::new(None);

/// Fails unless `pwsh` is PowerShell 7 or later (asked once per binary).
pub async fn check_version(pwsh: &Path) -> Result<(), ToolError> {
    let known = VERSIONS.lock().unwrap_or_else(PoisonError::into_inner).as_ref().and_then(|v| v.get(pwsh).copied());
    let major = match known {
        Some(major) => major,
        None => {
            let major = ask_version(pwsh).await?;
            VERSIONS.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_default().insert(pwsh.into(), major);
            major
        }
    };
    if major < OLDEST {
        return Err(ToolError::failed(format!(
            "{} is PowerShell {major}; this tool needs PowerShell 7 or later: install it, or run `powershell` \
             commands with Bash",
            pwsh.display()
        )));
    }
    Ok(())
}

async fn ask_version(pwsh: &Path) -> Result<u32, ToolError> {
    let run = tokio::process::Command::new(pwsh)
        .args(["-NoProfile", "-NonInteractive", "-Command", "$PSVersionTable.PSVersion.Major"])
        .env("POWERSHELL_TELEMETRY_OPTOUT", "1")
        .env("POWERSHELL_UPDATECHECK", "Off")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .map_err(|_| ToolError::failed(format!("{} did not say its version within 20 s", pwsh.display())))?
        .map_err(|e| ToolError::failed(format!("cannot start {}: {e}", pwsh.display())))?;
    let said = String::from_utf8_lossy(&out.stdout);
    said.trim().parse::<u32>().map_err(|_| {
        ToolError::failed(format!(
            "{} did not say its version (asked for $PSVersionTable.PSVersion.Major, it printed `{}`{})",
            pwsh.display(),
            said.trim(),
            String::from_utf8_lossy(&out.stderr).lines().next().map(|l| format!("; stderr: {l}")).unwrap_or_default()
        ))
    })
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
