//! `ripple-render dataset SPEC --count N --seed S -o DIR`: sequences drawn from a spec, each with
//! its ground truth, and their index (the library's `truth::dataset` does the work).

use std::path::Path;
use std::time::Instant;

use ripple_render::Error;
use ripple_render::base::units;
use ripple_render::truth::dataset::{self, spec::Spec};

use super::say::tell;

/// What `dataset` was asked.
pub struct Request<'a> {
    pub spec: Option<&'a Path>,
    pub count: Option<u64>,
    pub seed: u64,
    pub output: &'a Path,
    pub shard: Option<(u64, u64)>,
    pub merge: bool,
    pub threads: usize,
    pub quiet: bool,
}

pub fn run(request: &Request<'_>) -> Result<(), Error> {
    let started = Instant::now();
    if request.merge {
        let count = dataset::merge(request.output)?;
        if !request.quiet {
            tell(&format!(
                "merged the index of {count} sequences into {}/index.json and index.csv",
                request.output.display()
            ));
        }
        return Ok(());
    }
    // clap requires both without --merge.
    let (Some(path), Some(count)) = (request.spec, request.count) else {
        return Err(Error::usage("a spec and --count are required", None));
    };
    let spec = Spec::load(path)?;
    let job = dataset::Request {
        spec: &spec,
        count,
        seed: request.seed,
        dir: request.output,
        shard: request.shard,
        threads: request.threads,
        stop: &super::signals::STOP,
    };
    let quiet = request.quiet;
    let mut progress = |done: u64, total: u64| {
        if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprint!("\r{done}/{total} sequences");
        }
    };
    let made = dataset::make(&job, &mut progress)?;
    if !quiet {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprint!("\r");
        }
        let kept = if made.kept > 0 { format!(", kept {} an earlier run finished", made.kept) } else { String::new() };
        tell(&format!(
            "wrote {} sequences ({}) into {}{kept}, and {}, in {:.2} s",
            made.written,
            units::show(made.bytes),
            request.output.display(),
            made.index,
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}
