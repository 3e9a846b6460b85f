//! Strategies: the built-in ones from a configuration, and custom ones written in Python (any
//! object with `allocate(state, shard, requester)` and optionally `rebalance(state,
//! in_progress)`), all behind the core's `AllocationStrategy` trait.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyString, PyTuple};
use shardline_bind::answers::AnswerCache;
use shardline_bind::objects::Shard;
use shardline_bind::ops::strategy as ops_strategy;
use shardline_bind::strategy::{wrong_allocation, wrong_shard, StrategyHost};
use shardline_bind::{CustomStrategy, Failure, HandleCell};
use shardline_core::model::AllocationState;
use shardline_core::strategy::{Allocation, AllocationStrategy, StrategyConfig};

use crate::busy::Enter;
use crate::errors::{failure_err, guard, NullPointerError, OrRaise, Raised};
use crate::ops::{self, Answer, Rest};
use crate::state::PyAllocationState;
use crate::values;

enum Spec {
    Builtin(StrategyConfig),
    /// A Python object used as a strategy, and its name. Shared, so each coordinator made
    /// from one `Strategy` holds the same object without needing the GIL to copy it.
    Custom(Arc<Py<PyAny>>, String),
}

/// The Python side of a custom strategy; the shared adapter checks and explains its answers.
struct PyHost {
    obj: Arc<Py<PyAny>>,
    raised: Raised,
}

impl PyHost {
    /// Calls `method` with a view of `state` that expires when the call returns.
    fn call<'py>(
        &self,
        py: Python<'py>,
        state: &AllocationState,
        method: &str,
        args: impl FnOnce(Bound<'py, PyAllocationState>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> Result<Bound<'py, PyAny>, Failure> {
        // SAFETY: the view ends below, before this call (and the borrow of `state`) returns.
        let view =
            unsafe { PyAllocationState::lend(py, state) }.map_err(|e| self.raised.threw(e))?;
        let result = args(view.clone()).and_then(|a| self.obj.bind(py).call_method1(method, a));
        view.get().end_view();
        result.map_err(|e| self.raised.threw(e))
    }
}

impl StrategyHost for PyHost {
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Option<String>, Failure> {
        Python::attach(|py| {
            let r = self.call(py, state, "allocate", |view| {
                (view, shard, requester).into_pyobject(py)
            })?;
            if r.is_none() {
                return Ok(None);
            }
            match r.cast::<PyString>() {
                Ok(s) => Ok(Some(s.to_str().map_err(|e| self.raised.threw(e))?.into())),
                Err(_) => Err(wrong_allocation(&values::type_name(&r))),
            }
        })
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, Failure> {
        Python::attach(|py| {
            let has = self.obj.bind(py).hasattr("rebalance");
            if !has.map_err(|e| self.raised.threw(e))? {
                return Ok(Vec::new());
            }
            let r = self.call(py, state, "rebalance", |view| {
                let busy = PyFrozenSet::new(py, in_progress)?;
                (view, busy).into_pyobject(py)
            })?;
            if r.is_none() {
                return Ok(Vec::new());
            }
            let mut out = Vec::new();
            for item in r.try_iter().map_err(|e| self.raised.threw(e))? {
                let item = item.map_err(|e| self.raised.threw(e))?;
                match item.extract::<String>() {
                    Ok(s) => out.push(s),
                    Err(_) => return Err(wrong_shard(&format!("{item}"))),
                }
            }
            Ok(out)
        })
    }

    fn keep(&mut self, failure: Failure) -> shardline_core::Error {
        self.raised.keep_failure(failure)
    }
}

fn build(spec: &Spec, raised: &Raised) -> PyResult<Box<dyn AllocationStrategy>> {
    match spec {
        Spec::Builtin(c) => c.build().or_raise(),
        Spec::Custom(obj, name) => Ok(Box::new(CustomStrategy::new(
            name.clone(),
            PyHost {
                obj: obj.clone(),
                raised: raised.clone(),
            },
        ))),
    }
}

fn custom_spec(obj: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Spec> {
    let name = match name {
        Some(n) => n,
        None => match obj.getattr_opt("name")? {
            Some(n) if n.is_instance_of::<PyString>() => n.extract()?,
            _ => obj.get_type().name()?.to_string(),
        },
    };
    Ok(Spec::Custom(Arc::new(obj.clone().unbind()), name))
}

fn is_custom(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(!obj.is_instance_of::<PyString>()
        && !obj.is_instance_of::<PyDict>()
        && obj.hasattr("allocate")?)
}

fn config_spec(
    config: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Spec> {
    let base = match config {
        Some(c) if c.is_instance_of::<PyString>() => values::read(c, "strategy")?,
        _ => values::config(config, None, "strategy")?,
    };
    let overrides = match values::config(None, kwargs, "keyword arguments")? {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let config = ops_strategy::config(base, overrides, "strategy").map_err(failure_err)?;
    Ok(Spec::Builtin(config))
}

/// Whatever a `strategy=` parameter accepts, as a fresh strategy for a new coordinator: a
/// `Strategy`, a kind or configuration, or a custom strategy object.
pub fn strategy_from(
    obj: Option<&Bound<'_, PyAny>>,
    raised: &Raised,
) -> PyResult<Box<dyn AllocationStrategy>> {
    let obj = obj.ok_or_else(|| NullPointerError::new_err("strategy is None"))?;
    if let Ok(s) = obj.cast::<PyStrategy>() {
        return build(&s.get().spec, raised);
    }
    let spec = if is_custom(obj)? {
        custom_spec(obj, None)?
    } else {
        config_spec(Some(obj), None)?
    };
    build(&spec, raised)
}

/// An allocation strategy: where new shards go, and which shards to move.
#[pyclass(name = "Strategy", module = "shardline._native", frozen, subclass)]
pub struct PyStrategy {
    spec: Spec,
    /// Kept outside the lock so a callback may ask for it.
    name: String,
    inner: HandleCell<Deciding>,
    raised: Raised,
}

/// A strategy and the `str`s of the region ids it has answered (see `shardline_bind::answers`):
/// a repeated answer is a new reference to the same `str`.
struct Deciding {
    strategy: Box<dyn AllocationStrategy>,
    answers: AnswerCache<Py<PyString>>,
}

impl Deciding {
    fn answer<'py>(&mut self, py: Python<'py>, id: &Arc<str>) -> Bound<'py, PyString> {
        if let Some(s) = self.answers.get(AnswerCache::<Py<PyString>>::key(id)) {
            return s.bind(py).clone();
        }
        let s = PyString::new(py, id);
        if self.answers.worth_keeping(id) {
            self.answers.keep(id, s.clone().unbind());
        }
        s
    }
}

impl PyStrategy {
    fn from_spec(spec: Spec) -> PyResult<Self> {
        let raised = Raised::default();
        let strategy = build(&spec, &raised)?;
        Ok(PyStrategy {
            name: strategy.name().to_owned(),
            inner: HandleCell::new(
                "Strategy",
                Deciding {
                    strategy,
                    answers: AnswerCache::default(),
                },
            ),
            spec,
            raised,
        })
    }
}

#[pymethods]
impl PyStrategy {
    /// `Strategy("least-shard", absolute_limit=10)`, `Strategy({"kind": ...})`,
    /// `Strategy('{"kind": ...}')`, or `Strategy(obj, name=None)` for a custom strategy object.
    #[new]
    #[pyo3(signature = (config = None, /, **kwargs))]
    fn new(
        config: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let spec = match config {
            Some(c) if is_custom(c)? => {
                let name = kwargs
                    .map(|k| k.get_item("name"))
                    .transpose()?
                    .flatten()
                    .map(|n| n.extract())
                    .transpose()?;
                custom_spec(c, name)?
            }
            None if kwargs.is_none() => {
                return Err(NullPointerError::new_err(
                    "a strategy needs a kind, a configuration or a custom strategy object",
                ))
            }
            _ => config_spec(config, kwargs)?,
        };
        Self::from_spec(spec)
    }

    /// The operations of `shardline_bind::ops::strategy`: a decision takes the
    /// `AllocationState` first.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        if !ops_strategy::is_decision(op) {
            let config = match &self.spec {
                Spec::Builtin(c) => Some(c),
                Spec::Custom(..) => None,
            };
            return ops::call(py, "Strategy", op, args, |a| {
                ops_strategy::describe(config, &self.name, a)
            });
        }
        let first = args.get_item(0)?;
        let rest = args.get_slice(1, args.len());
        self.deciding(py, op, &first, |d, state, unreadable| {
            ops::call(py, "Strategy", op, &rest, |a| {
                let read = state
                    .get()
                    .read(py, |s| ops_strategy::decide(&mut *d.strategy, s, a));
                read.unwrap_or_else(|e| {
                    *unreadable = Some(e);
                    Err(Failure::internal("the state could not be read"))
                })
            })
        })
    }

    /// Where `shard` goes: a region id, or None while the strategy decides later. Typed,
    /// without `_op`'s conversions: it is the call hosts make per new shard. A `str` shard is
    /// read in place and the answer made a `str` directly, so no Rust string is allocated.
    #[pyo3(signature = (state, shard, requester = None))]
    fn allocate<'py>(
        &self,
        py: Python<'py>,
        state: &Bound<'py, PyAny>,
        shard: &Bound<'py, PyAny>,
        requester: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        let converted;
        let shard = match shard.cast_exact::<PyString>() {
            Ok(s) => s.to_str()?,
            Err(_) => {
                converted =
                    values::read_named::<Shard>(shard, || "Strategy.allocate: shard".into())?.0;
                converted.as_str()
            }
        };
        self.deciding(py, "allocate", state, |d, state, unreadable| {
            let read = state
                .get()
                .read(py, |s| d.strategy.allocate(s, requester, shard, None));
            match read {
                Ok(got) => match got.map_err(Failure::from).map_err(failure_err)? {
                    Allocation::Region(r) => Ok(Some(d.answer(py, &r))),
                    Allocation::Pending => Ok(None),
                },
                Err(e) => {
                    *unreadable = Some(e);
                    Err(failure_err(Failure::internal(
                        "the state could not be read",
                    )))
                }
            }
        })
    }
}

impl PyStrategy {
    /// Runs decision `op` on `state` under the strategy's lock. An exception a callback
    /// raised, or a state that could not be read (reentrancy, an expired view), wins over the
    /// answer, and no old callback error is left behind.
    fn deciding<'py, T>(
        &self,
        py: Python<'py>,
        op: &str,
        state: &Bound<'py, PyAny>,
        decide: impl FnOnce(
            &mut Deciding,
            &Bound<'py, PyAllocationState>,
            &mut Option<PyErr>,
        ) -> PyResult<T>,
    ) -> PyResult<T> {
        let state = state.cast::<PyAllocationState>().map_err(|_| {
            PyTypeError::new_err(format!("Strategy.{op}: state must be an AllocationState"))
        })?;
        guard(|| {
            let mut strategy = self.inner.enter(py)?;
            let mut unreadable = None;
            let answer = decide(&mut strategy, state, &mut unreadable);
            let kept = self.raised.take();
            match unreadable.or(kept) {
                Some(e) => Err(e),
                None => answer,
            }
        })
    }
}
