//! Output paths that must never lose data: two outputs on one file, outputs on inputs, links,
//! devices, pipes, sockets, folders that are not ours, and names at the length limit.

use std::path::Path;

use crate::support::decode_gif;
use crate::support::{ripple, scene_dir, temporaries};

const SMALL: &str = "[video]\nwidth = 24\nheight = 16\nfps = 25\nframes = 5\n[background]\ncolor = \"#000\"\n[[stone]]\nat = 0\nx = 12\ny = 8\n";

/// Every file in `dir` with its bytes, to show that a refused run changed nothing.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn two_outputs_on_one_file_are_refused_before_rendering() {
    let dir = scene_dir("same-file", SMALL);
    assert_eq!(ripple(&["scene.toml", "-o", "x.gif", "-q"], &dir).code, 0);
    std::os::unix::fs::symlink("x.gif", dir.join("link.gif")).unwrap();
    std::fs::hard_link(dir.join("x.gif"), dir.join("hard.gif")).unwrap();
    std::fs::create_dir(dir.join("frames")).unwrap();
    let before = snapshot(&dir);
    for args in [
        // Another spelling, a symbolic link, a hard link of the GIF.
        vec!["-o", "x.gif", "--hashes", "./x.gif", "--force"],
        vec!["-o", "x.gif", "--hashes", "link.gif", "--force"],
        vec!["-o", "x.gif", "--hashes", "hard.gif", "--force"],
        vec!["-o", "link.gif", "--hashes", "hard.gif", "--force"],
        // Both new: the same name twice, or a folder and a file of one name.
        vec!["-o", "new.gif", "--hashes", "new.gif"],
        vec!["-o", "new/", "--hashes", "new"],
        // A manifest inside the folder the frames replace.
        vec!["-o", "frames/", "--hashes", "frames/hashes.txt", "--force"],
    ] {
        let mut all = vec!["scene.toml"];
        all.extend(&args);
        let run = ripple(&all, &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("are the same file") || run.stderr.contains("are one inside the other"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("hint: give each output its own path"), "{}", run.stderr);
        assert_eq!(snapshot(&dir), before, "{args:?} changed something");
        assert!(!dir.join("new.gif").exists() && !dir.join("new").exists());
        assert!(temporaries(&dir).is_empty());
    }
    // A hard link of the scene is the scene.
    std::fs::hard_link(dir.join("scene.toml"), dir.join("scene-link.gif")).unwrap();
    let run = ripple(&["scene.toml", "-o", "scene-link.gif", "-f"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is an input of this run"), "{}", run.stderr);
}

#[test]
fn a_symbolic_link_is_written_through() {
    let dir = scene_dir("write-through", SMALL);
    std::fs::create_dir(dir.join("renders")).unwrap();
    std::os::unix::fs::symlink("renders/real.gif", dir.join("link.gif")).unwrap();
    let run = ripple(&["scene.toml", "-o", "link.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(std::fs::symlink_metadata(dir.join("link.gif")).unwrap().file_type().is_symlink(), "the link stays");
    assert_eq!(decode_gif(&std::fs::read(dir.join("renders/real.gif")).unwrap()).frames.len(), 5);
    // Replacing goes through the link too.
    let run = ripple(&["scene.toml", "-o", "link.gif", "-q"], &dir);
    assert_eq!(run.code, 2, "an existing target needs --force");
    assert_eq!(ripple(&["scene.toml", "-o", "link.gif", "-q", "-f"], &dir).code, 0);
    assert!(std::fs::symlink_metadata(dir.join("link.gif")).unwrap().file_type().is_symlink());
    assert!(temporaries(&dir.join("renders")).is_empty() && temporaries(&dir).is_empty());
}

#[test]
fn devices_are_written_as_streams_never_replaced() {
    let dir = scene_dir("devices", SMALL);
    let run = ripple(&["scene.toml", "-o", "/dev/null", "--format", "gif"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = ripple(&["scene.toml", "--hashes", "/dev/null", "-f"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Two streams into /dev/null harm nothing; two into one file would interleave.
    let run = ripple(&["scene.toml", "-o", "/dev/null", "--format", "gif", "--hashes", "/dev/null"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(dir.join("stdout.txt"), b"").unwrap();
    let stdout = std::fs::OpenOptions::new().write(true).open(dir.join("stdout.txt")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", "/dev/stdout", "--format", "gif", "--hashes", "/dev/stdout"])
        .current_dir(&dir)
        .stdout(stdout)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    // One stream into the shell's `> file`: the file holds the GIF.
    let stdout = std::fs::OpenOptions::new().write(true).open(dir.join("stdout.txt")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", "/dev/stdout", "--format", "gif", "-q"])
        .current_dir(&dir)
        .stdout(stdout)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(decode_gif(&std::fs::read(dir.join("stdout.txt")).unwrap()).frames.len(), 5);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // A copy of /dev/null in the working folder (needs root to make): stays a device with -f.
    let made = std::process::Command::new("mknod").arg(dir.join("null")).args(["c", "1", "3"]).status();
    if made.is_ok_and(|s| s.success()) {
        let run = ripple(&["scene.toml", "-o", "null", "--format", "gif", "-f"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(std::fs::metadata(dir.join("null")).unwrap().file_type().is_char_device(), "replaced the device");
        // A PNG sequence is a folder: not into a device.
        let run = ripple(&["scene.toml", "-o", "null", "--format", "png", "-f"], &dir);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("is a character device, and a PNG sequence is a folder"), "{}", run.stderr);
    } else {
        eprintln!("note: not root, so no device of our own to test over");
    }
    // A full device is a write error, not a crash.
    let run = ripple(&["scene.toml", "-o", "/dev/full", "--format", "gif"], &dir);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: cannot write /dev/full: No space left on device\n"), "{}", run.stderr);
}

#[test]
fn a_named_pipe_is_a_stream_and_a_socket_is_refused() {
    let dir = scene_dir("pipes", SMALL);
    let fifo = dir.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = std::thread::spawn(move || std::fs::read(&fifo).unwrap());
    let run = ripple(&["scene.toml", "-o", "pipe", "--format", "gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bytes = reader.join().unwrap();
    assert_eq!(decode_gif(&bytes).frames.len(), 5);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dir.join("pipe")).unwrap().file_type().is_fifo());

    let _listener = std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap();
    let run = ripple(&["scene.toml", "-o", "sock", "--format", "gif", "-f"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: the output sock is a socket\n"), "{}", run.stderr);
    assert!(std::fs::symlink_metadata(dir.join("sock")).unwrap().file_type().is_socket());
}

#[test]
fn only_folders_of_frames_are_replaced() {
    let dir = scene_dir("folders", SMALL);
    std::fs::create_dir(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), b"keep me").unwrap();
    std::fs::write(dir.join("mine/frame_0000.png"), b"old").unwrap();
    let run = ripple(&["scene.toml", "-o", "mine/", "-f"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("holds notes.txt, which is not a frame of a PNG sequence"), "{}", run.stderr);
    assert_eq!(std::fs::read(dir.join("mine/notes.txt")).unwrap(), b"keep me");
    // A folder of frames (an earlier render) is replaced whole.
    std::fs::remove_file(dir.join("mine/notes.txt")).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "mine/", "-f", "-q"], &dir).code, 0);
    assert_eq!(std::fs::read_dir(dir.join("mine")).unwrap().count(), 5);
    // An existing folder named like a GIF: frames, and a warning that says so.
    std::fs::create_dir(dir.join("anim.gif")).unwrap();
    let run = ripple(&["scene.toml", "-o", "anim.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.starts_with("warning: anim.gif is an existing folder, so the frames are written into it"));
    assert!(dir.join("anim.gif/frame_0004.png").exists());
}

#[test]
fn a_name_at_the_length_limit_is_written() {
    let dir = scene_dir("long-name", SMALL);
    // 251 bytes: a valid name whose temporary would be over 255 bytes if named after it whole.
    let name = format!("{}.gif", "a".repeat(247));
    let run = ripple(&["scene.toml", "-o", &name, "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(decode_gif(&std::fs::read(dir.join(&name)).unwrap()).frames.len(), 5);
    let run = ripple(&["scene.toml", "-o", &name, "-q", "-f"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let folder = "b".repeat(250);
    let run = ripple(&["scene.toml", "-o", &format!("{folder}/"), "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(temporaries(&dir).is_empty());
}

#[test]
fn an_output_that_appears_while_rendering_is_not_replaced_without_force() {
    use std::io::Read;
    let body = "[video]\nwidth = 320\nheight = 240\nframes = 40\n[background]\npattern = \"tiles\"\n\
                [rain]\ndrops_per_second = 200\n";
    let dir = scene_dir("appears", body);
    assert!(std::process::Command::new("mkfifo").arg(dir.join("pipe")).status().unwrap().success());
    for force in [false, true] {
        let _ = std::fs::remove_file(dir.join("hashes.txt"));
        let mut args = vec!["scene.toml", "-o", "pipe", "--format", "gif", "--hashes", "hashes.txt", "-q"];
        if force {
            args.push("-f");
        }
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(&args)
            .current_dir(&dir)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The render writes its GIF into the pipe and stops when the pipe is full (the GIF is
        // far larger than a pipe's 64 KiB): the manifest is begun but not finished.
        let mut pipe = std::fs::File::open(dir.join("pipe")).unwrap();
        let mut head = [0u8; 6];
        pipe.read_exact(&mut head).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::write(dir.join("hashes.txt"), b"someone else's").unwrap();
        let mut rest = Vec::new();
        pipe.read_to_end(&mut rest).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if force {
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            assert!(std::fs::read_to_string(dir.join("hashes.txt")).unwrap().starts_with("# ripple-render"));
        } else {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                stderr.starts_with("error: the output file hashes.txt already exists (it appeared while rendering)"),
                "{stderr}"
            );
            assert_eq!(std::fs::read(dir.join("hashes.txt")).unwrap(), b"someone else's");
        }
        assert!(temporaries(&dir).is_empty());
    }
}
