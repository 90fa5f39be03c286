//! The [`Runner`]: one wasmtime engine per process, and one fresh store per run.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use warden_feedback::{Denial, DenialSource, Run, SandboxInfo};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module, PoolingAllocationConfig,
    ResourceLimiter, Store, Trap, UpdateDeadline,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::cache::{self, DiskCache, Fetched};
use crate::capture::CaptureStream;
use crate::{Error, Image, Spec};

/// How often the epoch ticker advances: the resolution of the wall timeout.
pub const TICK: Duration = Duration::from_millis(10);
/// The most linear memory any guest gets (wasm32's whole address space).
pub const MAX_MEMORY: u64 = 4 << 30;
/// Runs that can be live at once in one [`Runner`] (pool slots).
pub const POOL_SLOTS: u32 = 32;
/// Table elements a guest may grow its table to.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// What one store holds: the WASI context and the limiter.
struct State {
    wasi: WasiP1Ctx,
    limiter: Limiter,
}

/// Caps memory and tables; remembers a refused memory growth so the result can say so.
struct Limiter {
    memory_bytes: usize,
    refused: Option<usize>,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes || maximum.is_some_and(|m| desired > m) {
            self.refused = Some(desired);
            // An error here is a trap: a clear end instead of an allocator's abort.
            wasmtime::bail!("memory limit of {} bytes reached (wanted {desired})", self.memory_bytes);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        4
    }

    fn memories(&self) -> usize {
        1
    }
}

/// Runs sandbox images. One per process: it owns the engine, its pool, the module caches and
/// the epoch ticker thread (stopped when the runner is dropped). `Sync`: runs may be
/// concurrent, up to [`POOL_SLOTS`] at once.
pub struct Runner {
    engine: Engine,
    linker: Linker<State>,
    disk: DiskCache,
    loaded: Mutex<HashMap<[u8; 32], InstancePre<State>>>,
    ticker: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("cache", &self.disk).finish_non_exhaustive()
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            drop(stop);
            let _ = handle.join();
        }
    }
}

impl Runner {
    /// The engine (Cranelift, pooling allocator, epoch interruption, fuel), WASI preview 1
    /// linked, compiled modules cached in `cache_dir` (created 0700 when missing).
    ///
    /// # Errors
    /// [`Error::Cache`] when the directory cannot be created or others can write to it;
    /// [`Error::Engine`] when wasmtime refuses the configuration.
    pub fn new(cache_dir: &Path) -> Result<Runner, Error> {
        let engine = Engine::new(&config()).map_err(|e| Error::Engine(format!("{e:#}")))?;
        let disk = DiskCache::open(cache_dir, &engine)?;
        let mut linker: Linker<State> = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut State| &mut s.wasi)
            .map_err(|e| Error::Engine(format!("linking WASI: {e:#}")))?;
        let (stop, ticks) = mpsc::channel::<()>();
        let ticking = engine.clone();
        let handle = std::thread::Builder::new()
            .name(String::from("warden-wasi-epoch"))
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = ticks.recv_timeout(TICK) {
                    ticking.increment_epoch();
                }
            })
            .map_err(|e| Error::Engine(format!("starting the epoch ticker: {e}")))?;
        Ok(Runner { engine, linker, disk, loaded: Mutex::new(HashMap::new()), ticker: Some((stop, handle)) })
    }

    /// Makes `image` ready to run (compiled or loaded from disk, linked), once per process.
    ///
    /// # Errors
    /// [`Error::Compile`], [`Error::Cache`] or [`Error::Instantiate`].
    pub fn prepare(&self, image: &Image) -> Result<Option<Fetched>, Error> {
        self.instance_pre(image).map(|(_, f)| f)
    }

    /// Compiles `image` from scratch, bypassing both caches (benchmarks: the cold cost).
    ///
    /// # Errors
    /// [`Error::Compile`].
    pub fn compile_uncached(&self, image: &Image) -> Result<(), Error> {
        cache::compile(&self.engine, image.wasm()).map(drop)
    }

    /// Loads `image` from the on-disk cache (writing it first if missing), bypassing the
    /// in-memory one (benchmarks: the cost of a new process's first run).
    ///
    /// # Errors
    /// [`Error::Compile`] or [`Error::Cache`].
    pub fn load_from_disk(&self, image: &Image) -> Result<(), Error> {
        let path = self.disk.path_for(image.digest());
        if !path.is_file() {
            self.disk.fetch(&self.engine, image.wasm(), image.digest())?;
        }
        cache::load(&self.engine, &path).map(drop)
    }

    fn instance_pre(&self, image: &Image) -> Result<(InstancePre<State>, Option<Fetched>), Error> {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pre) = loaded.get(image.digest()) {
            return Ok((pre.clone(), None));
        }
        let (module, fetched) = self.disk.fetch(&self.engine, image.wasm(), image.digest())?;
        let pre = self.link(image, &module)?;
        loaded.insert(*image.digest(), pre.clone());
        Ok((pre, Some(fetched)))
    }

    fn link(&self, image: &Image, module: &Module) -> Result<InstancePre<State>, Error> {
        self.linker
            .instantiate_pre(module)
            .map_err(|e| Error::Instantiate { image: image.name().to_string(), reason: format!("{e:#}") })
    }

    /// Runs one tool.
    ///
    /// A run that starts always gives a [`Run`]: its exit code, or `timed_out`, or a trap
    /// (fuel, memory, a crash) named in `sandbox.notes` and at the end of stderr.
    ///
    /// # Errors
    /// Nothing ran: [`Error::NetworkNotSupported`] when `spec.network`, [`Error::EmptyArgv`],
    /// [`Error::UnknownTool`], [`Error::GuestPath`], [`Error::Preopen`] for a directory that
    /// cannot be opened, and compile, cache or instantiation errors.
    pub fn run(&self, spec: &Spec) -> Result<Run, Error> {
        self.run_cancellable(spec, Arc::new(AtomicBool::new(false)))
    }

    /// [`Runner::run`], stopped within a tick ([`TICK`]) of `cancel` becoming true: the run
    /// then ends `cancelled`, with what the tool wrote so far.
    ///
    /// # Errors
    /// As [`Runner::run`].
    pub fn run_cancellable(&self, spec: &Spec, cancel: Arc<AtomicBool>) -> Result<Run, Error> {
        if spec.network {
            return Err(Error::NetworkNotSupported);
        }
        let manifest = spec.image.manifest();
        let tool = spec.argv.first().ok_or(Error::EmptyArgv)?;
        if !manifest.runs(tool) {
            return Err(Error::UnknownTool {
                image: spec.image.name().to_string(),
                tool: tool.clone(),
                tools: manifest.tools.join(" "),
            });
        }
        for guest in spec.preopens.iter().map(|p| &p.guest).chain([&spec.cwd]) {
            if !guest.starts_with('/') {
                return Err(Error::GuestPath(guest.clone()));
            }
        }
        let (pre, _) = self.instance_pre(&spec.image)?;
        let stdout = CaptureStream::new(spec.limits.output_bytes, false, Vec::new());
        let roots = spec.preopens.iter().map(|p| p.guest.clone()).collect();
        let stderr = CaptureStream::new(spec.limits.output_bytes, manifest.reports_denials, roots);
        let wasi = self.wasi_ctx(spec, &stdout, &stderr)?;
        let mut notes = Vec::new();
        let memory_bytes = spec.limits.memory_bytes.min(MAX_MEMORY);
        if memory_bytes < spec.limits.memory_bytes {
            notes.push(format!("memory limit lowered to {MAX_MEMORY} bytes (wasm32's address space)"));
        }
        let limiter = Limiter { memory_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX), refused: None };
        let mut store = Store::new(&self.engine, State { wasi, limiter });
        store.limiter(|s| &mut s.limiter);
        let instantiate_err = |e: wasmtime::Error| Error::Instantiate { image: spec.image.name().to_string(), reason: format!("{e:#}") };
        store.set_fuel(spec.limits.fuel.unwrap_or(u64::MAX)).map_err(instantiate_err)?;
        // Checked at every tick: the call's cancel flag first, then the wall timeout.
        let ticks = spec.limits.timeout.as_nanos().div_ceil(TICK.as_nanos().max(1)) + 1;
        let mut left = u64::try_from(ticks).unwrap_or(u64::MAX);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if cancel.load(Ordering::Relaxed) {
                return Err(Cancelled.into());
            }
            left = left.saturating_sub(1);
            Ok(if left == 0 { UpdateDeadline::Interrupt } else { UpdateDeadline::Continue(1) })
        });

        let start = Instant::now();
        let result = pre.instantiate(&mut store).and_then(|instance| {
            let main = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
            main.call(&mut store, ())
        });
        let duration = start.elapsed();
        let refused = store.data().limiter.refused;
        drop(store);

        let mut run = Run {
            sandbox: SandboxInfo { backend: String::from("wasi"), ..SandboxInfo::default() },
            duration_ms: duration.as_secs_f64() * 1e3,
            ..Run::default()
        };
        let mut denials = Vec::new();
        match result {
            Ok(()) => run.exit_code = Some(0),
            Err(e) => {
                let end = classify(&e, refused, spec);
                run.exit_code = end.exit_code;
                run.timed_out = end.timed_out;
                run.cancelled = end.cancelled;
                if let Some(note) = end.note {
                    stderr.push(format!("\nwarden: {}\n", note.1).as_bytes());
                    notes.push(note.0);
                }
                if let Some(d) = end.denial {
                    denials.push(d);
                }
            }
        }
        let (out, _) = stdout.take();
        let (err, marked) = stderr.take();
        denials.splice(0..0, marked);
        run.stdout = out;
        run.stderr = err;
        run.denials = denials;
        run.sandbox.notes = notes;
        Ok(run)
    }

    fn wasi_ctx(&self, spec: &Spec, stdout: &CaptureStream, stderr: &CaptureStream) -> Result<WasiP1Ctx, Error> {
        let mut b = WasiCtxBuilder::new();
        b.args(&spec.argv)
            .stdin(MemoryInputPipe::new(spec.stdin.clone()))
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            // Host file calls run inline on this thread instead of a blocking pool: the
            // guest waits for them either way, and a warm call stays in microseconds.
            .allow_blocking_current_thread(true);
        for (k, v) in &spec.env {
            b.env(k, v);
        }
        if !spec.env.iter().any(|(k, _)| k == "PWD") {
            b.env("PWD", &spec.cwd);
        }
        for p in &spec.preopens {
            let perms = if p.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            b.preopened_dir(&p.host, &p.guest, perms).map_err(|e| Error::Preopen {
                host: p.host.clone(),
                guest: p.guest.clone(),
                reason: format!("{e:#}"),
            })?;
        }
        Ok(b.build_p1())
    }
}

/// What the tick callback stops a cancelled run with.
#[derive(Debug)]
struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the call was cancelled")
    }
}

impl std::error::Error for Cancelled {}

/// How a run that did not return from `_start` ended.
struct End {
    exit_code: Option<i32>,
    timed_out: bool,
    cancelled: bool,
    /// (for `sandbox.notes`, for the end of stderr)
    note: Option<(String, String)>,
    denial: Option<Denial>,
}

fn classify(e: &wasmtime::Error, refused: Option<usize>, spec: &Spec) -> End {
    let mut end = End { exit_code: None, timed_out: false, cancelled: false, note: None, denial: None };
    if let Some(exit) = e.downcast_ref::<I32Exit>() {
        end.exit_code = Some(exit.0);
    } else if e.downcast_ref::<Cancelled>().is_some() {
        end.cancelled = true;
        end.note = Some((String::from("cancelled"), String::from("the tool was stopped: the call was cancelled")));
    } else if let Some(wanted) = refused {
        let limit = spec.limits.memory_bytes.min(MAX_MEMORY);
        end.note = Some((
            format!("trap: memory limit ({limit} bytes; the guest asked for {wanted})"),
            format!("the tool was stopped: it tried to grow its memory to {wanted} bytes, over the limit of {limit}"),
        ));
        end.denial = Some(Denial::observed("limit.memory", format!("{wanted} bytes"), DenialSource::Limit));
    } else if let Some(trap) = e.downcast_ref::<Trap>() {
        end.note = Some(match trap {
            Trap::Interrupt => {
                end.timed_out = true;
                (
                    format!("trap: interrupt (wall timeout of {:?})", spec.limits.timeout),
                    format!("the tool was stopped after the wall timeout of {:?}", spec.limits.timeout),
                )
            }
            Trap::OutOfFuel => (
                format!("trap: out of fuel (budget {})", spec.limits.fuel.unwrap_or(u64::MAX)),
                format!("the tool was stopped: it used its whole fuel budget of {} instructions", spec.limits.fuel.unwrap_or(u64::MAX)),
            ),
            other => (format!("trap: {other}"), format!("the tool crashed (wasm trap: {other})")),
        });
    } else {
        let cause = e.root_cause();
        end.note = Some((format!("error: {cause}"), format!("the tool failed in the WASI host: {cause}")));
    }
    end
}

fn config() -> Config {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_memories(POOL_SLOTS)
        .total_tables(POOL_SLOTS)
        .total_core_instances(POOL_SLOTS)
        .max_memories_per_module(1)
        .max_memory_size(usize::try_from(MAX_MEMORY).unwrap_or(usize::MAX))
        .table_elements(MAX_TABLE_ELEMENTS);
    let mut c = Config::new();
    c.epoch_interruption(true)
        .consume_fuel(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    c
}
