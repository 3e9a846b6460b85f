//! Strategies: the built-in ones from a configuration, and custom ones written in Python (any
//! object with `allocate(state, shard, requester)` and optionally `rebalance(state,
//! in_progress)`), all behind the core's `AllocationStrategy` trait.

use std::collections::HashSet;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyString};
use shardline_bind::strategy::{wrong_allocation, wrong_shard, StrategyHost};
use shardline_bind::{CustomStrategy, Failure};
use shardline_core::model::{AllocationState, ShardId};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, Explanation, InProgress, StrategyConfig,
};

use crate::busy::Enter;
use crate::errors::{guard, NullPointerError, OrRaise, Raised};
use crate::state::PyAllocationState;
use crate::values;
use shardline_bind::HandleCell;

enum Spec {
    Builtin(StrategyConfig),
    Custom(Custom),
}

/// A Python object used as a strategy.
struct Custom {
    obj: Py<PyAny>,
    name: String,
}

impl Custom {
    fn clone_ref(&self, py: Python<'_>) -> Custom {
        Custom {
            obj: self.obj.clone_ref(py),
            name: self.name.clone(),
        }
    }
}

/// The Python side of a custom strategy; the shared adapter checks and explains its answers.
struct PyHost {
    custom: Custom,
    raised: Raised,
}

impl PyHost {
    /// Calls `method` with a view of `state` that expires when the call returns.
    fn call<'py>(
        &self,
        py: Python<'py>,
        state: &AllocationState,
        method: &str,
        args: impl FnOnce(Bound<'py, PyAllocationState>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    ) -> Result<Bound<'py, PyAny>, Failure> {
        // SAFETY: the view ends below, before this call (and the borrow of `state`) returns.
        let view = Bound::new(py, unsafe { PyAllocationState::lend(state) })
            .map_err(|e| self.raised.threw(e))?;
        let result =
            args(view.clone()).and_then(|a| self.custom.obj.bind(py).call_method1(method, a));
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
                Err(_) => Err(wrong_allocation(&type_name(&r))),
            }
        })
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, Failure> {
        Python::attach(|py| {
            let has = self.custom.obj.bind(py).hasattr("rebalance");
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

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "an object".into(), |n| n.to_string())
}

fn build(spec: &Spec, raised: &Raised) -> PyResult<Box<dyn AllocationStrategy>> {
    match spec {
        Spec::Builtin(c) => c.build().or_raise(),
        Spec::Custom(c) => Ok(Box::new(CustomStrategy::new(
            c.name.clone(),
            PyHost {
                custom: Python::attach(|py| c.clone_ref(py)),
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
    Ok(Spec::Custom(Custom {
        obj: obj.clone().unbind(),
        name,
    }))
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
    // A bare kind ("least-shard") is the common case; JSON text and dicts are full configs.
    let base = match config {
        Some(c) => match c.cast::<PyString>() {
            Ok(s) if !s.to_str()?.trim_start().starts_with('{') => {
                let d = PyDict::new(c.py());
                d.set_item("kind", s)?;
                Some(d.into_any())
            }
            _ => Some(c.clone()),
        },
        None => None,
    };
    let value = values::config(base.as_ref(), kwargs)?;
    let config = StrategyConfig::from_json(&value).or_raise()?;
    config.build().or_raise()?; // validate now, not at first use
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

fn in_progress_set(obj: Option<&Bound<'_, PyAny>>) -> PyResult<InProgress> {
    let mut set = HashSet::new();
    if let Some(o) = obj {
        for s in o.try_iter()? {
            set.insert(ShardId::from(s?.extract::<String>()?));
        }
    }
    Ok(set)
}

/// An allocation strategy: where new shards go, and which shards to move.
#[pyclass(name = "Strategy", module = "shardline._native", frozen)]
pub struct PyStrategy {
    spec: Spec,
    /// Kept outside the lock so a callback may ask for it.
    name: String,
    inner: HandleCell<Box<dyn AllocationStrategy>>,
    raised: Raised,
}

impl PyStrategy {
    fn from_spec(spec: Spec) -> PyResult<Self> {
        let raised = Raised::default();
        let strategy = build(&spec, &raised)?;
        Ok(PyStrategy {
            name: strategy.name().to_owned(),
            inner: HandleCell::new("Strategy", strategy),
            spec,
            raised,
        })
    }

    fn run<R>(
        &self,
        py: Python<'_>,
        state: &PyAllocationState,
        f: impl FnOnce(&mut dyn AllocationStrategy, &AllocationState) -> shardline_core::Result<R>,
    ) -> PyResult<R> {
        guard(|| {
            let mut strategy = self.inner.enter(py)?;
            let r = state.read(py, |s| f(&mut **strategy, s));
            // A failed read (reentrancy, expired view) must not leave an old callback error.
            let kept = self.raised.take();
            let r = r?;
            match kept {
                Some(e) => Err(e),
                None => r.or_raise(),
            }
        })
    }

    fn allocate_inner(
        &self,
        py: Python<'_>,
        state: &PyAllocationState,
        shard: &str,
        requester: Option<&str>,
        explain: Option<&mut Explanation>,
    ) -> PyResult<Option<String>> {
        let a = self.run(py, state, |st, s| st.allocate(s, requester, shard, explain))?;
        Ok(match a {
            Allocation::Region(r) => Some(r.to_string()),
            Allocation::Pending => None,
        })
    }

    fn rebalance_inner(
        &self,
        py: Python<'_>,
        state: &PyAllocationState,
        in_progress: Option<&Bound<'_, PyAny>>,
        explain: Option<&mut Explanation>,
    ) -> PyResult<Vec<String>> {
        let busy = in_progress_set(in_progress)?;
        let picked = self.run(py, state, |st, s| st.rebalance(s, &busy, explain))?;
        Ok(picked.iter().map(|s| s.to_string()).collect())
    }
}

#[pymethods]
impl PyStrategy {
    /// `Strategy("least-shard", absolute_limit=10)`, `Strategy({"kind": ...})`,
    /// `Strategy('{"kind": ...}')`, or `Strategy(obj)` for a custom strategy object.
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

    /// A custom strategy from any object with `allocate(state, shard, requester)` (returning
    /// a region id, or None for "not now") and optionally `rebalance(state, in_progress)`.
    #[staticmethod]
    #[pyo3(signature = (obj, name = None))]
    fn custom(obj: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Self> {
        if !obj.hasattr("allocate")? {
            return Err(crate::errors::invalid_argument(
                "a custom strategy needs an allocate(state, shard, requester) method",
            ));
        }
        Self::from_spec(custom_spec(obj, name)?)
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The configuration kind, or "custom".
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.spec {
            Spec::Builtin(c) => c.kind(),
            Spec::Custom(_) => "custom",
        }
    }

    /// The full configuration with defaults filled in; None for a custom strategy.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.spec {
            Spec::Builtin(c) => values::to_py(py, c).map(Some),
            Spec::Custom(_) => Ok(None),
        }
    }

    /// The region for `shard`, or None when the strategy defers ("pending"). Raises
    /// NoCandidatesError when no region can take it.
    #[pyo3(signature = (state, shard, requester = None))]
    fn allocate(
        &self,
        py: Python<'_>,
        state: &PyAllocationState,
        shard: &str,
        requester: Option<&str>,
    ) -> PyResult<Option<String>> {
        self.allocate_inner(py, state, shard, requester, None)
    }

    /// `allocate`, plus a structured explanation (a dict).
    #[pyo3(signature = (state, shard, requester = None))]
    fn explain_allocate<'py>(
        &self,
        py: Python<'py>,
        state: &PyAllocationState,
        shard: &str,
        requester: Option<&str>,
    ) -> PyResult<(Option<String>, Bound<'py, PyAny>)> {
        let mut e = Explanation::default();
        let r = self.allocate_inner(py, state, shard, requester, Some(&mut e))?;
        Ok((r, values::to_py(py, &e)?))
    }

    /// Shards to hand off, in decision order. `in_progress`: shards already being handed off.
    #[pyo3(signature = (state, in_progress = None))]
    fn rebalance(
        &self,
        py: Python<'_>,
        state: &PyAllocationState,
        in_progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<String>> {
        self.rebalance_inner(py, state, in_progress, None)
    }

    #[pyo3(signature = (state, in_progress = None))]
    fn explain_rebalance<'py>(
        &self,
        py: Python<'py>,
        state: &PyAllocationState,
        in_progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Vec<String>, Bound<'py, PyAny>)> {
        let mut e = Explanation::default();
        let r = self.rebalance_inner(py, state, in_progress, Some(&mut e))?;
        Ok((r, values::to_py(py, &e)?))
    }

    fn __repr__(&self) -> String {
        match &self.spec {
            Spec::Builtin(c) => format!(
                "Strategy({})",
                serde_json::to_string(c).unwrap_or_else(|_| c.kind().into())
            ),
            Spec::Custom(c) => format!("Strategy.custom(name={:?})", c.name),
        }
    }
}
