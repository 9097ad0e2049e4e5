//! The interpreter's core meshes (`grid.call ... cores`): each core is a
//! thread, as compiled code runs them, but only one runs at a time — the
//! one holding the interpreter's memory (`World`: every buffer and the
//! printed lines). A core keeps it until it ends or waits on a semaphore
//! whose count is short; then the next core that can run (round robin)
//! takes it. So signals between cores are seen exactly as written, the
//! run is deterministic, and when every unfinished core waits on a count
//! that nothing can raise any more the call fails at once, at the first
//! such wait's location, instead of hanging.
//!
//! Each core runs its programs (the points of the grid whose leading
//! coordinate is its own) in row-major order, with its own scratch and
//! semaphores; `shared` scratch is one buffer for all.

use super::{InterpretError, Interpreter, Program, Result, fail, value::for_each_index};
use crate::HostArray;
use mlir_sys::MlirOperation;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// What the running core holds.
pub(super) struct World {
    pub(super) buffers: Vec<HostArray>,
    pub(super) printed: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum CoreState {
    /// Can run (not started, or woken).
    Ready,
    /// Waits for semaphore element (buffer, index) to reach `amount`; the
    /// wait's location.
    Waiting {
        buffer: usize,
        at: usize,
        amount: i64,
        location: String,
    },
    Done,
}

struct Schedule {
    /// The memory, while no core holds it.
    world: Option<World>,
    /// The core whose turn it is.
    turn: usize,
    states: Vec<CoreState>,
    /// Why the call stops (a core's error, or a deadlock).
    failure: Option<String>,
}

/// The cores of one call and their turns.
pub(super) struct Mesh {
    schedule: Mutex<Schedule>,
    turns: Condvar,
    /// Each core's copy of each semaphore scratch buffer, by scratch
    /// position: `semaphores[k][core]` (buffer ids).
    pub(super) semaphores: Vec<Vec<usize>>,
}

/// A core's place in its mesh, held by the interpreter it runs on.
pub(super) struct CoreContext {
    mesh: Arc<Mesh>,
    core: usize,
    /// Whether the core holds the memory now.
    holding: bool,
}

impl Mesh {
    pub(super) fn new(cores: usize, world: World, semaphores: Vec<Vec<usize>>) -> Self {
        Mesh {
            schedule: Mutex::new(Schedule {
                world: Some(world),
                turn: 0,
                states: vec![CoreState::Ready; cores],
                failure: None,
            }),
            turns: Condvar::new(),
            semaphores,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The memory back, once every core has ended; the first failure.
    pub(super) fn finish(&self) -> (World, Option<String>) {
        let mut schedule = self.lock();
        (schedule.world.take().expect("no core holds the memory once all have ended"), schedule.failure.take())
    }

    /// Blocks until it is `core`'s turn; returns the memory.
    fn acquire(&self, core: usize) -> Result<World> {
        let mut schedule = self.lock();
        loop {
            if let Some(failure) = &schedule.failure {
                return fail(format!("stopped: {failure}"));
            }
            if schedule.turn == core
                && let Some(world) = schedule.world.take()
            {
                schedule.states[core] = CoreState::Ready;
                return Ok(world);
            }
            schedule = self.turns.wait(schedule).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Gives the memory back (`None`: `core` does not hold it, having been
    /// stopped) as `core` leaves it in `state`, and hands the turn to the
    /// next core that can run.
    fn release(&self, core: usize, world: Option<World>, state: CoreState, failure: Option<String>) {
        let mut schedule = self.lock();
        schedule.states[core] = state;
        if schedule.failure.is_none() {
            schedule.failure = failure;
        }
        let Some(world) = world else {
            self.turns.notify_all();
            return;
        };
        let cores = schedule.states.len();
        let runnable = |k: usize, world: &World| match &schedule.states[k] {
            CoreState::Ready => true,
            CoreState::Waiting { buffer, at, amount, .. } => {
                super::value::read(&world.buffers[*buffer], *at).i() >= *amount
            }
            CoreState::Done => false,
        };
        let next = (1..=cores).map(|step| (core + step) % cores).find(|&k| runnable(k, &world));
        match next {
            Some(k) => schedule.turn = k,
            None => {
                let stuck = schedule.states.iter().find_map(|state| match state {
                    CoreState::Waiting { location, amount, .. } => Some((location.clone(), *amount)),
                    _ => None,
                });
                if let Some((location, amount)) = stuck
                    && schedule.failure.is_none()
                {
                    schedule.failure = Some(format!(
                        "a semaphore wait can never be satisfied (it needs {amount}, and every core that could \
                         signal it has ended or waits too): block.semaphore_wait at {location}"
                    ));
                }
            }
        }
        schedule.world = Some(world);
        self.turns.notify_all();
    }
}

impl Interpreter {
    /// Takes the memory for this core's turn.
    fn take_turn(&mut self) -> Result<()> {
        let core = self.core.as_mut().expect("a core's interpreter");
        let world = core.mesh.acquire(core.core)?;
        core.holding = true;
        self.buffers = world.buffers;
        self.printed = world.printed;
        Ok(())
    }

    /// Gives the memory back (if this core holds it), leaving the core in
    /// `state`.
    fn give_turn(&mut self, state: CoreState, failure: Option<String>) {
        let core = self.core.as_mut().expect("a core's interpreter");
        let world = std::mem::take(&mut core.holding)
            .then(|| World { buffers: std::mem::take(&mut self.buffers), printed: std::mem::take(&mut self.printed) });
        core.mesh.release(core.core, world, state, failure);
    }

    /// Runs core `core`'s programs: the grid points whose leading
    /// coordinate is `core`, in row-major order.
    fn run_core(&mut self, kernel: MlirOperation, call: &Program, grid: &[i64]) -> Result<()> {
        self.take_turn()?;
        let core = self.core.as_ref().expect("a core's interpreter").core as i64;
        let rest: Vec<usize> = grid[1..].iter().map(|&size| size as usize).collect();
        let mut kept = vec![None; call.specs.len()];
        let mut outcome = Ok(());
        for_each_index(&rest, |point| {
            if outcome.is_ok() {
                let point: Vec<i64> = std::iter::once(core).chain(point.iter().map(|&p| p as i64)).collect();
                outcome = self.program(kernel, call, &point, grid, &mut kept);
            }
        });
        outcome
    }

    /// A wait on semaphore element (buffer, at) for `amount` whose count
    /// is short: lets the other cores run until it is not.
    pub(super) fn wait_for_signal(&mut self, buffer: usize, at: usize, amount: i64, location: String) -> Result<()> {
        if self.core.is_none() {
            return fail("not a core");
        }
        self.give_turn(CoreState::Waiting { buffer, at, amount, location }, None);
        self.take_turn()
    }

    /// The buffer of core `target`'s copy of the semaphore scratch buffer
    /// `buffer` (this core's).
    pub(super) fn other_core_semaphore(&self, buffer: usize, target: i64) -> Result<usize> {
        let Some(core) = self.core.as_ref() else {
            return fail("a signal to another core (`core`) needs a call over a core mesh (`grid.call ... cores`)");
        };
        let row = core.mesh.semaphores.iter().find(|row| row.get(core.core) == Some(&buffer));
        match (row, usize::try_from(target)) {
            (Some(row), Ok(target)) if target < row.len() => Ok(row[target]),
            (Some(row), _) => fail(format!("a signal to core {target} of a mesh of {} cores", row.len())),
            (None, _) => fail("a signal to another core needs one of the call's semaphore scratch"),
        }
    }
}

/// An MLIR handle moved to a core's thread.
#[derive(Clone, Copy)]
struct CoreHandle(MlirOperation);

// SAFETY: the module the handle belongs to is only read while it is
// interpreted, and only by the core holding the turn (`Mesh`): no two
// threads ever use MLIR at once.
unsafe impl Send for CoreHandle {}

impl CoreHandle {
    /// The handle (a method, so closures capture the whole `Send` wrapper).
    fn get(self) -> MlirOperation {
        self.0
    }
}

/// The buffers a core mesh's scratch gets: `scratch[core][k]`, and the
/// semaphore rows (`Mesh::semaphores`).
pub(super) struct MeshScratch {
    pub(super) scratch: Vec<Vec<usize>>,
    pub(super) semaphores: Vec<Vec<usize>>,
}

impl Interpreter {
    /// Runs a call over a core mesh (`cores`): a thread per core, taking
    /// turns (see the module's comment); `call` is what each core's
    /// programs get, `scratch` each core's scratch.
    pub(super) fn on_cores(
        &mut self,
        kernel: MlirOperation,
        call: &Program,
        grid: &[i64],
        scratch: MeshScratch,
    ) -> Result<()> {
        let cores = grid[0] as usize;
        let world = World { buffers: std::mem::take(&mut self.buffers), printed: std::mem::take(&mut self.printed) };
        let mesh = Arc::new(Mesh::new(cores, world, scratch.semaphores));
        let (module, kernel) = (CoreHandle(self.module), CoreHandle(kernel));
        let dma_on_wait = self.dma_on_wait;
        std::thread::scope(|threads| {
            for (core, core_scratch) in scratch.scratch.iter().enumerate() {
                let mesh = mesh.clone();
                threads.spawn(move || {
                    let context = CoreContext { mesh, core, holding: false };
                    let mut interpreter = Interpreter {
                        module: module.get(),
                        buffers: Vec::new(),
                        grid: Vec::new(),
                        printed: Vec::new(),
                        core: Some(context),
                        dma_on_wait,
                        queued: HashMap::new(),
                    };
                    let program = Program { scratch: core_scratch, ..*call };
                    let outcome = interpreter.run_core(kernel.get(), &program, grid);
                    interpreter.give_turn(CoreState::Done, outcome.err().map(|error| error.0));
                });
            }
        });
        let (world, failure) = mesh.finish();
        self.buffers = world.buffers;
        self.printed = world.printed;
        failure.map_or(Ok(()), |message| Err(InterpretError(message)))
    }
}
