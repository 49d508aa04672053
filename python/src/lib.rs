//! `ripple_render._native`: the library's frames, ground truth and datasets as Python objects.
//! An item's arrays lie in one `bytearray`, filled in place with the interpreter's lock
//! released, which `ripple_render/__init__.py` views as NumPy arrays (no copy); every error is
//! the library's own message raised as the Python exception a caller expects.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use pyo3::exceptions::{PyFileNotFoundError, PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyFloat, PyInt, PyList, PyString, PyTuple};

use ripple_render::base::error::Error;
use ripple_render::render::Inputs;
use ripple_render::scene::Scene;
use ripple_render::truth::arrays::{self, Arrays, Element, KINDS};
use ripple_render::truth::dataset::{self, Pictures, spec::Spec};
use ripple_render::truth::{self, Truth};

/// Pictures a dataset keeps decoded between items, at most.
const KEPT_PICTURES: u64 = 256 << 20;

/// The library's error as the Python exception that says the same: a file that is not there
/// `FileNotFoundError`, a budget `MemoryError`, anything else the caller gave `ValueError`.
fn raised(e: Error) -> PyErr {
    let mut message = e.to_string();
    for hint in e.hints() {
        message.push_str("\nhint: ");
        message.push_str(&hint);
    }
    let missing = |path: &Path| !path.as_os_str().is_empty() && std::fs::metadata(path).is_err();
    match &e {
        Error::SceneUnreadable { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        Error::Scene(diagnostic) if diagnostic.missing.is_some() => PyFileNotFoundError::new_err(message),
        Error::Background { path, .. } | Error::Input { path, .. } if missing(path) => {
            PyFileNotFoundError::new_err(message)
        }
        Error::Budget { .. } => PyMemoryError::new_err(message),
        Error::Interrupted => PyRuntimeError::new_err(message),
        _ if e.is_input() => PyValueError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// How a Python caller raises the memory budget.
fn raise_with(bytes: u64) -> String {
    format!("pass max_memory={} (bytes) to allow it", bytes.next_power_of_two())
}

/// One `--set` value, from Python: a bool, int, float, str or a list of them, as TOML.
fn toml_value(key: &str, value: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if value.is_instance_of::<PyBool>() {
        Ok(toml::Value::Boolean(value.extract()?))
    } else if value.is_instance_of::<PyInt>() {
        let n: i64 =
            value.extract().map_err(|_| PyValueError::new_err(format!("set[{key:?}]: {value} is too large")))?;
        Ok(toml::Value::Integer(n))
    } else if value.is_instance_of::<PyFloat>() {
        Ok(toml::Value::Float(value.extract()?))
    } else if value.is_instance_of::<PyString>() {
        Ok(toml::Value::String(value.extract()?))
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = value.extract()?;
        Ok(toml::Value::Array(items.iter().map(|v| toml_value(key, v)).collect::<PyResult<_>>()?))
    } else {
        Err(PyTypeError::new_err(format!(
            "set[{key:?}] is a {}: a value is a bool, int, float, str or a list of them",
            value.get_type().name()?
        )))
    }
}

/// `set`'s pairs as the command line's `--set KEY=VALUE` words.
fn overrides(set: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<Vec<String>> {
    set.into_iter().map(|(key, value)| Ok(format!("{key}={}", toml_value(&key, &value)?))).collect()
}

/// A scene and its text: read from `path`, or `text` read as if it lay in the current folder.
fn scene_of(text: Option<String>, path: Option<PathBuf>, set: &[String]) -> Result<(Scene, String), Error> {
    let (scene, text) = match (text, path) {
        (_, Some(path)) => {
            // Read as the command line reads it, so that a refusal says the same.
            let bytes = Scene::read_file(&path)?;
            let scene = Scene::from_bytes_with(bytes.clone(), &path, set)?;
            let text = String::from_utf8(bytes).unwrap_or_default();
            (scene, text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text))
        }
        (Some(text), None) => (Scene::from_toml_str_with(&text, Path::new("<scene>"), set)?, text),
        (None, None) => return Err(Error::usage("no scene given", None)),
    };
    Ok((scene, truth::recorded_text(text, set)))
}

/// A new `bytearray` of `len` bytes, not yet written: every caller fills all of it before
/// Python sees it (and drops it unseen when filling fails), so nothing reads what was there.
fn bytearray(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyByteArray>> {
    let len = isize::try_from(len).map_err(|_| PyMemoryError::new_err(format!("{len} bytes")))?;
    // SAFETY: a null source asks CPython for `len` bytes it does not fill; the result is a new
    // reference or null with the error set, which `from_owned_ptr_or_err` turns into `Err`.
    unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), len))
            .map(|b| b.cast_into_unchecked())
    }
}

/// `bytes` as a slice of `T`, which a bytearray's buffer (malloc's alignment) always is.
fn typed<T: bytemuck::Pod>(bytes: &mut [u8]) -> Result<&mut [T], Error> {
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| Error::Encode(format!("an array's buffer: {e}")))
}

/// The arrays of one sequence and its `meta.json`, for Python: one buffer, and each array's name,
/// offset in it, dtype and shape.
type Made<'py> = (Bound<'py, PyByteArray>, Vec<Place>, String);

/// An array's place in a buffer: its name, offset, dtype and shape.
type Place = (&'static str, usize, &'static str, Vec<usize>);

/// Where each array lies in one buffer: offsets rounded up to 64 bytes. Returns the layout, each
/// array's bytes and the buffer's length.
fn layout(t: usize, h: usize, w: usize) -> (Vec<Place>, Vec<usize>, usize) {
    let mut at = 0;
    let (mut out, mut sizes) = (Vec::new(), Vec::new());
    let kinds = KINDS.iter().map(|&(name, element, values)| {
        let mut shape = vec![t, h, w];
        if values > 1 {
            shape.push(values);
        }
        (name, element, shape)
    });
    for (name, element, shape) in kinds.chain([("clean", Element::U8, vec![h, w, 3])]) {
        let bytes = shape.iter().product::<usize>() * element.size();
        out.push((name, at, element.name(), shape));
        sizes.push(bytes);
        at = (at + bytes).next_multiple_of(64);
    }
    (out, sizes, at)
}

/// Computes the ground truth of `scene` over `inputs` into one new buffer, the lock released.
///
/// One buffer rather than one an array: the C allocator keeps a freed block of an item's size
/// for the next item (it raises its thresholds to the largest block freed), where seven smaller
/// ones were handed back to the system and faulted in again every item (half an item's time).
fn ground_truth_of<'py>(
    py: Python<'py>,
    scene: &Scene,
    text: &str,
    inputs: &Inputs,
    truth: Truth,
    threads: usize,
) -> PyResult<Made<'py>> {
    let [t, h, w] = arrays::shape(scene);
    let (places, sizes, len) = layout(t, h, w);
    let block = bytearray(py, len)?;
    let meta = truth::meta_of(scene, text, inputs, truth);
    // SAFETY: the bytearray was made above and no Python code has seen it yet, so nothing else
    // reads or resizes its buffer while it is filled.
    let bytes = unsafe { block.as_bytes_mut() };
    py.detach(|| -> Result<(), Error> {
        huge_pages(bytes);
        let mut parts = Vec::new();
        let mut rest = &mut bytes[..];
        let mut at = 0;
        for ((_, offset, _, _), &size) in places.iter().zip(&sizes) {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(offset - at);
            let (part, tail) = tail.split_at_mut(size);
            parts.push(part);
            (rest, at) = (tail, offset + size);
        }
        let [frames, flow, warp, height, height_raw, normal, valid, clean] = &mut parts[..] else {
            return Err(Error::Encode("eight arrays".into()));
        };
        clean.copy_from_slice(inputs.background.pixels.as_flattened());
        let mut out = Arrays {
            frames,
            flow: typed(flow)?,
            warp: typed(warp)?,
            height: typed(height)?,
            height_raw: typed(height_raw)?,
            normal: typed(normal)?,
            valid,
        };
        arrays::fill(scene, inputs, &mut out, threads, &AtomicBool::new(false))
    })
    .map_err(raised)?;
    let meta = serde_json::to_string(&meta).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((block, places, meta))
}

/// Asks Linux to back `bytes` with huge pages where it can (as NumPy does for its large
/// arrays): a few faults for a large buffer instead of one every 4 KiB. Only a hint: where it
/// is refused, or elsewhere, nothing changes.
fn huge_pages(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (bytes.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (bytes.as_ptr() as usize + bytes.len()) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies within `bytes`, which this call holds mutably; the advice
            // changes how its pages are backed, never their contents.
            let _ = unsafe {
                rustix::mm::madvise(start as *mut std::ffi::c_void, end - start, rustix::mm::Advice::LinuxHugepage)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// A scene, its text as `meta.json` records it, and its inputs, read with the lock released,
/// once its arrays (all of them, or the frames alone) are known to fit in `max_memory`.
fn prepared(
    py: Python<'_>,
    text: Option<String>,
    path: Option<PathBuf>,
    set: Vec<(String, Bound<'_, PyAny>)>,
    max_memory: u64,
    all: bool,
) -> PyResult<(Scene, String, Inputs)> {
    let set = overrides(set)?;
    let (scene, text) = py.detach(|| scene_of(text, path, &set)).map_err(raised)?;
    arrays::check_memory(&scene, all, max_memory, &raise_with).map_err(raised)?;
    let inputs = py.detach(|| Inputs::for_scene_within(&scene, max_memory)).map_err(raised)?;
    Ok((scene, text, inputs))
}

/// The frames of a scene: `(buffer, shape)`.
#[pyfunction]
#[pyo3(signature = (text, path, set, max_memory, threads))]
fn render<'py>(
    py: Python<'py>,
    text: Option<String>,
    path: Option<PathBuf>,
    set: Vec<(String, Bound<'py, PyAny>)>,
    max_memory: u64,
    threads: usize,
) -> PyResult<(Bound<'py, PyByteArray>, Vec<usize>)> {
    let (scene, _, inputs) = prepared(py, text, path, set, max_memory, false)?;
    let [t, h, w] = arrays::shape(&scene);
    let buffer = bytearray(py, t * h * w * 3)?;
    // SAFETY: as in `ground_truth_of`: the bytearray is new and not yet Python's to touch.
    let bytes = unsafe { buffer.as_bytes_mut() };
    py.detach(|| {
        huge_pages(bytes);
        arrays::frames(&scene, &inputs, bytes, threads, &AtomicBool::new(false))
    })
    .map_err(raised)?;
    Ok((buffer, vec![t, h, w, 3]))
}

/// The ground truth of a scene.
#[pyfunction]
#[pyo3(signature = (text, path, set, max_memory, threads))]
fn ground_truth<'py>(
    py: Python<'py>,
    text: Option<String>,
    path: Option<PathBuf>,
    set: Vec<(String, Bound<'py, PyAny>)>,
    max_memory: u64,
    threads: usize,
) -> PyResult<Made<'py>> {
    let (scene, text, inputs) = prepared(py, text, path, set, max_memory, true)?;
    ground_truth_of(py, &scene, &text, &inputs, Truth::default(), threads)
}

/// A dataset spec's sequences, made one at a time.
#[pyclass(module = "ripple_render._native", frozen)]
struct Dataset {
    spec: Spec,
    seed: u64,
    /// The sequences, numbered as `dataset` numbers them, and each one's split.
    items: Vec<(u64, &'static str)>,
    pictures: Pictures,
    max_memory: u64,
}

#[pymethods]
impl Dataset {
    #[new]
    #[pyo3(signature = (text, path, folder, seed, count, split, max_memory))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        text: Option<String>,
        path: Option<PathBuf>,
        folder: PathBuf,
        seed: u64,
        count: u64,
        split: Option<String>,
        max_memory: u64,
    ) -> PyResult<Dataset> {
        let spec = py
            .detach(|| match (text, path) {
                (_, Some(path)) => Spec::load(&path),
                (Some(text), None) => Spec::read(&text, &folder.join("<spec>")),
                (None, None) => Err(Error::usage("no spec given", None)),
            })
            .map_err(raised)?;
        let splits = dataset::splits(count, seed, spec.split);
        if let Some(split) = &split
            && !dataset::SPLITS.contains(&split.as_str())
        {
            return Err(PyValueError::new_err(format!(
                "split = {split:?} is not a split: allowed \"train\", \"val\", \"test\" or None"
            )));
        }
        let items = (0..count).zip(splits).filter(|(_, s)| split.as_deref().is_none_or(|split| split == *s)).collect();
        Ok(Dataset { spec, seed, items, pictures: Pictures::new(KEPT_PICTURES), max_memory })
    }

    fn __len__(&self) -> usize {
        self.items.len()
    }

    /// Item `k` (from 0, within the split): its arrays, `meta.json`, number and split.
    fn item<'py>(&self, py: Python<'py>, k: usize) -> PyResult<(Made<'py>, u64, &'static str)> {
        let &(index, split) =
            self.items.get(k).ok_or_else(|| PyIndexError::new_err(format!("item {k} of {}", self.items.len())))?;
        let drawn = dataset::draw::draw(&self.spec, self.seed, index);
        let folder = self.spec.pictures.as_ref().map(|(folder, _)| folder.as_path());
        let (scene, inputs) = py
            .detach(|| {
                let scene = dataset::scene_of(&drawn, folder)?;
                arrays::check_memory(&scene, true, self.max_memory, &raise_with)?;
                let inputs = dataset::inputs_of(&scene, Some(&self.pictures))?;
                Ok((scene, inputs))
            })
            .map_err(raised)?;
        let made = ground_truth_of(py, &scene, &drawn.scene, &inputs, self.spec.truth, 1)?;
        Ok((made, index, split))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(ground_truth, m)?)?;
    m.add_class::<Dataset>()?;
    Ok(())
}
