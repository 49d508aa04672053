//! Datasets from a seed (`ripple-render dataset SPEC --count N --seed S -o DIR`): N sequences,
//! each a scene drawn from the spec's ranges by its own generator ([`draw`]), written with its
//! ground truth into `DIR/SPLIT/NNNNNN/`, and an index of them all. The same spec, seed and count
//! give the same bytes on any machine and thread count; `--shard K/N` writes one slice, and the
//! slices' indexes merge into the index one run writes. A run finds the sequences an earlier
//! one finished (whole, their sums verified) and writes only the others.

pub mod draw;
pub mod spec;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use image::RgbaImage;

use serde_json::json;
use xxhash_rust::xxh3::xxh3_64;

use self::draw::Drawn;
use self::spec::Spec;
use crate::base::error::{Error, Result};
use crate::base::limits::DEFAULT_BUDGET;
use crate::base::picture::Given;
use crate::base::pool::Ordered;
use crate::output::{Policy, Staged};
use crate::render::Inputs;
use crate::scene::Scene;
use crate::truth::arrays::Sequence;

/// The record of what a dataset folder is made from: its first file, and how a later run knows
/// the folder is the same dataset's.
pub const RECORD: &str = "dataset.json";

/// The three splits, in the order their fractions are given.
pub const SPLITS: [&str; 3] = ["train", "val", "test"];

/// What to make.
pub struct Request<'a> {
    /// The spec.
    pub spec: &'a Spec,
    /// Sequences in all.
    pub count: u64,
    /// The seed.
    pub seed: u64,
    /// The dataset's folder.
    pub dir: &'a Path,
    /// The slice `(K, N)`: the K-th of N (from 1), or the whole.
    pub shard: Option<(u64, u64)>,
    /// Sequences written side by side.
    pub threads: usize,
    /// Once set, stops before the next sequence (and within one, before its next frame).
    pub stop: &'static AtomicBool,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Made {
    /// Sequences written now.
    pub written: u64,
    /// Sequences an earlier run had finished, verified and kept.
    pub kept: u64,
    /// Bytes written now.
    pub bytes: u64,
    /// The index file written (the whole index, or this shard's).
    pub index: String,
}

/// The sequences of shard `k` of `n` among `count`: `⌊(k−1)·count/n⌋ .. ⌊k·count/n⌋`.
pub fn shard_range(count: u64, (k, n): (u64, u64)) -> std::ops::Range<u64> {
    let at = |k: u64| (u128::from(k) * u128::from(count) / u128::from(n)) as u64;
    at(k - 1)..at(k)
}

/// Each sequence's split: sequences ordered by XXH3-64 of `split`, the seed and their number;
/// the first `round(count·train)` are train, the next `round(count·val)` val, the rest test.
pub fn splits(count: u64, seed: u64, fractions: [f64; 3]) -> Vec<&'static str> {
    let mut order: Vec<(u64, u64)> = (0..count)
        .map(|i| {
            let mut key = b"split".to_vec();
            key.extend(seed.to_le_bytes());
            key.extend(i.to_le_bytes());
            (xxh3_64(&key), i)
        })
        .collect();
    order.sort_unstable();
    let train = (count as f64 * fractions[0]).round() as u64;
    let val = ((count as f64 * fractions[1]).round() as u64).min(count - train.min(count));
    let mut out = vec![SPLITS[2]; count as usize];
    for (rank, (_, i)) in order.into_iter().enumerate() {
        let rank = rank as u64;
        out[i as usize] = if rank < train {
            SPLITS[0]
        } else if rank < train + val {
            SPLITS[1]
        } else {
            SPLITS[2]
        };
    }
    out
}

/// Makes the dataset (or its shard).
pub fn make(request: &Request<'_>, progress: &mut dyn FnMut(u64, u64)) -> Result<Made> {
    let Request { spec, count, seed, dir, .. } = *request;
    let record = record(spec, count, seed);
    claim_folder(dir, &record)?;
    let range = request.shard.map_or(0..count, |shard| shard_range(count, shard));
    let splits = splits(count, seed, spec.split);
    let mut made = Made::default();
    let mut rows = Vec::new();
    let mut todo = Vec::new();
    for i in range.clone() {
        let drawn = draw::draw(spec, seed, i);
        let folder = dir.join(splits[i as usize]).join(format!("{i:06}"));
        if holds(&folder, &drawn) {
            made.kept += 1;
        } else {
            todo.push((drawn.clone(), folder));
        }
        rows.push((drawn, splits[i as usize]));
    }
    let total = todo.len() as u64;
    let pictures = spec.pictures.as_ref().map(|(folder, _)| folder.clone());
    let (truth, stop) = (spec.truth, request.stop);
    let mut pool = Ordered::new(request.threads.max(1), move |(drawn, folder): (Drawn, PathBuf)| {
        write_sequence(&drawn, &folder, pictures.as_deref(), truth, stop)
    });
    let mut done = 0;
    let mut each = |bytes: u64| -> Result<()> {
        made.written += 1;
        made.bytes += bytes;
        done += 1;
        progress(done, total);
        Ok(())
    };
    for job in todo {
        pool.submit(job, &mut each)?;
    }
    pool.finish(&mut each)?;
    let name = match request.shard {
        Some((k, n)) if (k, n) != (1, 1) => format!("index.{k}-of-{n}.json"),
        _ => "index.json".to_string(),
    };
    let entries: Vec<serde_json::Value> = rows.iter().map(|(d, split)| row_json(d, split)).collect();
    write_index(dir, &name, &record, &entries, request.shard.is_none() || request.shard == Some((1, 1)))?;
    made.index = name;
    Ok(made)
}

/// Writes one sequence's ground truth into `folder` (staged: it appears whole or not at all),
/// replacing what a broken earlier run left there. Returns its bytes. Another run into the same
/// folder may finish the sequence first (its folder appears whole, with the same bytes): that
/// is success, whenever it happens.
fn write_sequence(
    drawn: &Drawn,
    folder: &Path,
    pictures: Option<&Path>,
    truth: crate::truth::Truth,
    stop: &AtomicBool,
) -> Result<u64> {
    match write_sequence_once(drawn, folder, pictures, truth, stop) {
        Err(_) if holds(folder, drawn) => Ok(0),
        done => done,
    }
}

fn write_sequence_once(
    drawn: &Drawn,
    folder: &Path,
    pictures: Option<&Path>,
    truth: crate::truth::Truth,
    stop: &AtomicBool,
) -> Result<u64> {
    let parent = folder.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    if holds(folder, drawn) {
        return Ok(0);
    }
    if folder.exists() {
        // Not whole (checked before): what an interrupted or damaged write left.
        std::fs::remove_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    }
    let scene = scene_of(drawn, pictures)?;
    let inputs = inputs_of(&scene, None)?;
    let staged = Staged::begin(folder, Policy::Truth { force: false }, &[])?;
    let written = crate::truth::write(&scene, &drawn.scene, &inputs, staged.path(), truth, 1, stop)
        .map_err(|e| staged.claim(e))?;
    staged.commit()?;
    Ok(written.bytes())
}

/// The scene drawn for a sequence, read as if it lay beside the pictures (in the folder
/// `pictures`), which it names by file name.
pub fn scene_of(drawn: &Drawn, pictures: Option<&Path>) -> Result<Scene> {
    let name = format!("{:06}.toml", drawn.index);
    let place = pictures.map_or_else(|| PathBuf::from(&name), |p| p.join(&name));
    Scene::from_toml_str(&drawn.scene, &place)
}

/// A drawn scene's inputs, its picture taken from `kept` where it has it.
pub fn inputs_of(scene: &Scene, kept: Option<&Pictures>) -> Result<Inputs> {
    let given = match (kept, &scene.background.image) {
        (Some(kept), Some(path)) => kept.given(path),
        _ => Given::none(),
    };
    Inputs::for_scene_given(scene, DEFAULT_BUDGET, &given)
}

/// Sequence `index` of the dataset of `spec` and `seed`, in memory: the arrays its folder's
/// files hold ([`crate::truth::arrays`]) and its `meta.json`, its pictures from `kept`, drawn on
/// `threads`.
pub fn sequence(spec: &Spec, seed: u64, index: u64, kept: &Pictures, threads: usize) -> Result<(Drawn, Sequence)> {
    let drawn = draw::draw(spec, seed, index);
    let folder = spec.pictures.as_ref().map(|(folder, _)| folder.as_path());
    let scene = scene_of(&drawn, folder)?;
    let inputs = inputs_of(&scene, Some(kept))?;
    let sequence = Sequence::compute(&scene, &drawn.scene, &inputs, spec.truth, threads)?;
    Ok((drawn, sequence))
}

/// Pictures decoded once and kept for the sequences after (up to a number of bytes, the first
/// ones decoded; a picture beyond them is decoded for each sequence that uses it).
#[derive(Debug)]
pub struct Pictures {
    kept: Mutex<Kept>,
    limit: u64,
}

/// The pictures kept: their bytes in all, and each one's path and pixels.
#[derive(Debug, Default)]
struct Kept {
    bytes: u64,
    pictures: Vec<(PathBuf, Arc<RgbaImage>)>,
}

impl Pictures {
    /// Keeping up to `limit` bytes of decoded pixels.
    pub fn new(limit: u64) -> Pictures {
        Pictures { kept: Mutex::new(Kept::default()), limit }
    }

    /// The picture at `path` handed over, decoded (now, or kept from before); nothing handed
    /// over when it cannot be decoded, so that the scene's own reading says why.
    fn given(&self, path: &Path) -> Given {
        let mut given = Given::none();
        let found = {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.pictures.iter().find(|(p, _)| p == path).map(|(_, pixels)| Arc::clone(pixels))
        };
        let pixels = match found {
            Some(pixels) => pixels,
            None => match crate::base::picture::decode_within(path, DEFAULT_BUDGET) {
                Ok(image) => {
                    let pixels = Arc::new(image);
                    let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
                    let size = pixels.as_raw().len() as u64;
                    if kept.bytes + size <= self.limit && !kept.pictures.iter().any(|(p, _)| p == path) {
                        kept.bytes += size;
                        kept.pictures.push((path.to_path_buf(), Arc::clone(&pixels)));
                    }
                    pixels
                }
                Err(_) => return given,
            },
        };
        given.add_shared(path, pixels);
        given
    }
}

/// Whether `folder` holds sequence `drawn`, whole: every file its sums name verifies, and its
/// `meta.json` records the scene drawn for it (not another sequence's folder moved there).
fn holds(folder: &Path, drawn: &Drawn) -> bool {
    crate::truth::is_whole(folder)
        && std::fs::read(folder.join("meta.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .is_some_and(|meta| meta["scene"]["text"] == drawn.scene.as_str())
}

/// What `dataset.json` holds: the spec (text and hash), the seed and the count.
fn record(spec: &Spec, count: u64, seed: u64) -> serde_json::Value {
    json!({
        "format": "ripple-render dataset 1",
        "spec": { "text": spec.text, "xxh3": format!("{:016x}", xxh3_64(spec.text.as_bytes())) },
        "pictures": spec.pictures_as_written,
        "picture_files": spec.pictures.as_ref().map(|(_, names)| names),
        "seed": seed,
        "count": count,
        "program": { "version": env!("CARGO_PKG_VERSION") },
    })
}

/// Makes `dir` the dataset's folder: new or empty (its record written), or the folder of the
/// same dataset (the same record); anything else is refused.
fn claim_folder(dir: &Path, record: &serde_json::Value) -> Result<()> {
    let text = format!("{}\n", serde_json::to_string_pretty(record).map_err(|e| Error::Encode(e.to_string()))?);
    let path = dir.join(RECORD);
    match std::fs::read_to_string(&path) {
        Ok(found) if found == text => return Ok(()),
        Ok(found) if version_of(&found).as_deref() != Some(env!("CARGO_PKG_VERSION")) => {
            return Err(Error::usage(
                format!(
                    "{} holds a dataset made by another version of ripple-render ({})",
                    dir.display(),
                    version_of(&found).unwrap_or_else(|| "unknown".into())
                ),
                Some("choose a new folder, or finish that dataset with the version that began it"),
            ));
        }
        Ok(_) => {
            return Err(Error::usage(
                format!(
                    "{} holds a dataset made from another spec, seed or count (its {RECORD} differs)",
                    dir.display()
                ),
                Some("choose a new folder, or run again with that dataset's spec, --seed and --count"),
            ));
        }
        Err(_) => {}
    }
    // Shards started together may find the others' first files and no record yet.
    let foreign = std::fs::read_dir(dir).ok().and_then(|entries| {
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).find(|name| !is_ours(name))
    });
    if let Some(name) = foreign {
        return Err(Error::usage(
            format!("{} holds {name} and no {RECORD}: it is not a dataset's folder", dir.display()),
            Some("choose a new or empty folder"),
        ));
    }
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::usage(format!("{} is a file, and a dataset is a folder", dir.display()), None));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    write_file(&path, text.as_bytes())
}

/// The program version a dataset record names.
fn version_of(record: &str) -> Option<String> {
    let record: serde_json::Value = serde_json::from_str(record).ok()?;
    record["program"]["version"].as_str().map(str::to_string)
}

/// Whether `name` is what a dataset's folder holds: its record, a split's folder, an index, or
/// one of these being written.
fn is_ours(name: &str) -> bool {
    let name = name.strip_prefix('.').unwrap_or(name);
    name.starts_with(RECORD) || name.starts_with("index.") || SPLITS.contains(&name)
}

/// One sequence's entry in the index.
fn row_json(drawn: &Drawn, split: &str) -> serde_json::Value {
    let mut row = serde_json::Map::new();
    row.insert("sequence".into(), json!(drawn.index));
    row.insert("split".into(), json!(split));
    row.insert("path".into(), json!(format!("{split}/{:06}", drawn.index)));
    row.insert("seed".into(), json!(format!("{:016x}", drawn.seed)));
    for (key, value) in &drawn.columns {
        row.insert((*key).into(), json!(value));
    }
    serde_json::Value::Object(row)
}

/// Writes the index `name` (and, for the whole, `index.csv`), staged.
fn write_index(
    dir: &Path,
    name: &str,
    record: &serde_json::Value,
    rows: &[serde_json::Value],
    whole: bool,
) -> Result<()> {
    let doc = json!({ "dataset": record, "sequences": rows });
    let text = format!("{}\n", serde_json::to_string_pretty(&doc).map_err(|e| Error::Encode(e.to_string()))?);
    write_file(&dir.join(name), text.as_bytes())?;
    if whole {
        write_file(&dir.join("index.csv"), csv(rows).as_bytes())?;
    }
    Ok(())
}

/// The index as CSV: a header of the columns, then a line a sequence.
fn csv(rows: &[serde_json::Value]) -> String {
    let mut out = draw::COLUMNS.join(",");
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = draw::COLUMNS
            .iter()
            .map(|c| {
                let v = &row[*c];
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                if text.contains([',', '"', '\n']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text }
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// Writes a file whole: staged beside it and renamed over it.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let staged = Staged::begin(path, Policy::File { force: true }, &[])?;
    let mut file = staged.file()?;
    std::io::Write::write_all(&mut file, bytes).map_err(|e| staged.claim(Error::io(path, e)))?;
    drop(file);
    staged.commit()
}

/// Merges the shards' indexes in `dir` into the index one run writes, once everything checks:
/// the slices are of this dataset (its record), each lists exactly its share of the sequences
/// (`index.K-of-N.json`: [`shard_range`]), every entry is the one the recorded spec and seed
/// draw, and every sequence's folder is there and whole, holding its own scene. Returns the
/// number of sequences.
pub fn merge(dir: &Path) -> Result<u64> {
    let path = dir.join(RECORD);
    if !dir.is_dir() {
        return Err(Error::usage(
            format!("{} is not a dataset's folder: it does not exist", dir.display()),
            Some("name the folder the shards were written into (-o DIR)"),
        ));
    }
    let record_text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::usage(format!("{} is not a dataset's folder: it has no {RECORD}", dir.display()), None)
        }
        _ => Error::io(&path, e),
    })?;
    let damaged = |what: String| {
        Error::usage(format!("{}: {what}", path.display()), Some("make the dataset again into a new folder"))
    };
    let record: serde_json::Value =
        serde_json::from_str(&record_text).map_err(|e| damaged(format!("is not JSON: {e}")))?;
    let (Some(count), Some(seed), Some(text)) =
        (record["count"].as_u64(), record["seed"].as_u64(), record["spec"]["text"].as_str())
    else {
        return Err(damaged("does not name the count, the seed and the spec".into()));
    };
    let pictures: Vec<String> = match &record["picture_files"] {
        serde_json::Value::Null => Vec::new(),
        list => serde_json::from_value(list.clone()).map_err(|_| damaged("names its pictures wrongly".into()))?,
    };
    let version = record["program"]["version"].as_str().unwrap_or("an unknown version");
    if version != env!("CARGO_PKG_VERSION") {
        return Err(Error::usage(
            format!("{} was made by ripple-render {version}, and this is {}", dir.display(), env!("CARGO_PKG_VERSION")),
            Some("merge with the version that made the shards: another may draw other sequences"),
        ));
    }
    let spec = Spec::recorded(text, &pictures)?;
    if record != self::record(&spec, count, seed) || spec.pictures.as_ref().is_some_and(|(_, n)| n.is_empty()) {
        return Err(damaged("is not what this version records of a dataset".into()));
    }
    let splits = splits(count, seed, spec.split);
    let mut rows: Vec<Option<serde_json::Value>> = vec![None; count as usize];
    let mut slices = Vec::new();
    for name in slice_names(dir)? {
        let slice = slice_of(&name).ok_or_else(|| {
            Error::usage(
                format!("{}: {name} is not a slice's index (index.K-of-N.json, K from 1 to N)", dir.display()),
                None,
            )
        })?;
        slices.push((name, slice));
    }
    let n = slices.first().map_or(1, |(_, (_, n))| *n);
    if slices.iter().any(|(_, (_, other))| *other != n) {
        let names: Vec<&str> = slices.iter().map(|(name, _)| name.as_str()).collect();
        return Err(Error::usage(
            format!("{}: slices of different splits into shards: {}", dir.display(), names.join(", ")),
            Some("keep the indexes of one --shard K/N split and merge again"),
        ));
    }
    for (name, (k, n)) in &slices {
        let (name, k, n) = (name.as_str(), *k, *n);
        let file = dir.join(name);
        let doc: serde_json::Value = std::fs::read(&file).map_err(|e| Error::io(&file, e)).and_then(|b| {
            serde_json::from_slice(&b).map_err(|e| Error::usage(format!("{name} is not JSON: {e}"), None))
        })?;
        if doc["dataset"] != record {
            return Err(Error::usage(
                format!("{name} is a slice of another dataset (its record differs from {RECORD})"),
                None,
            ));
        }
        let listed = doc["sequences"].as_array().map_or(&[][..], Vec::as_slice);
        let range = shard_range(count, (k, n));
        if listed.len() as u64 != range.end - range.start {
            return Err(Error::usage(
                format!(
                    "{name} lists {} sequences, and slice {k} of {n} is {}..{}",
                    listed.len(),
                    range.start,
                    range.end
                ),
                Some(&format!("run --shard {k}/{n} again into this folder, then merge again")),
            ));
        }
        for (i, row) in range.zip(listed) {
            if *row != row_json(&draw::draw(&spec, seed, i), splits[i as usize]) {
                return Err(Error::usage(
                    format!(
                        "{name}: the entry of sequence {i} is not the one its spec and seed draw (edited, or of another run)"
                    ),
                    Some(&format!("run --shard {k}/{n} again into this folder, then merge again")),
                ));
            }
            rows[i as usize] = Some(row.clone());
        }
    }
    let missing: Vec<usize> = rows.iter().enumerate().filter(|(_, r)| r.is_none()).map(|(i, _)| i).collect();
    if let Some(&first) = missing.first() {
        return Err(Error::usage(
            format!("{} of {count} sequences are in no shard's index (the first: {first})", missing.len()),
            Some("run the missing shards (--shard K/N) into this folder, then merge again"),
        ));
    }
    for i in 0..count {
        let drawn = draw::draw(&spec, seed, i);
        let folder = dir.join(splits[i as usize]).join(format!("{i:06}"));
        if !holds(&folder, &drawn) {
            let k = (1..=n).find(|&k| shard_range(count, (k, n)).contains(&i)).unwrap_or(1);
            return Err(Error::usage(
                format!(
                    "sequence {i} ({}/{i:06}) is missing or damaged: its files do not match its sums.txt, or it holds another scene",
                    splits[i as usize]
                ),
                Some(&format!(
                    "run --shard {k}/{n} again into this folder (it rewrites what does not verify), then merge again"
                )),
            ));
        }
    }
    let rows: Vec<serde_json::Value> = rows.into_iter().flatten().collect();
    write_index(dir, "index.json", &record, &rows, true)?;
    Ok(count)
}

/// The names of the slices' indexes in `dir`, sorted.
fn slice_names(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index.") && n.ends_with(".json") && n.contains("-of-"))
        .collect();
    names.sort();
    Ok(names)
}

/// `(K, N)` of `index.K-of-N.json`, for 1 ≤ K ≤ N.
fn slice_of(name: &str) -> Option<(u64, u64)> {
    let (k, n) = name.strip_prefix("index.")?.strip_suffix(".json")?.split_once("-of-")?;
    let digits =
        |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u64>().ok()).flatten();
    let (k, n) = (digits(k)?, digits(n)?);
    (1..=n).contains(&k).then_some((k, n))
}
