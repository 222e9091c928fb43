//! A `Plan` on the device: `PlanBuffers` holds its block lists, element colours and
//! colours per block, and `PlanBuffersCache` uploads each plan once per device and keeps
//! it, keyed by the plan's address. `prepared.rs` takes the buffers from here for a loop.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use op2_core::{DeviceBuffer, Plan, Result};

use super::DeviceApi;

/// A plan on the device: its block lists (all colours, in order) and, for
/// coloured loops, each element's colour and each block's colour count.
pub struct PlanBuffers {
    /// Block ids, colour after colour.
    pub units: Box<dyn DeviceBuffer>,
    /// Element colours, indexed from the plan's first element.
    pub colours: Box<dyn DeviceBuffer>,
    /// Element colours per block.
    pub ncolours: Box<dyn DeviceBuffer>,
}

/// A plan and its buffers (the plan is held so its address stays unique).
type Entry = (Arc<Plan>, Arc<PlanBuffers>);

/// Plans already on one device, keyed by the plan's address (the plan is
/// kept alive with its buffers, so the address stays unique).
#[derive(Default)]
pub struct PlanBuffersCache {
    plans: Mutex<HashMap<usize, Entry>>,
}

impl PlanBuffersCache {
    /// The buffers of `plan`, uploaded on first use.
    pub fn get<A: DeviceApi>(&self, api: &A, plan: &Arc<Plan>) -> Result<Arc<PlanBuffers>> {
        let key = Arc::as_ptr(plan) as usize;
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, b)) = plans.get(&key) {
            return Ok(b.clone());
        }
        let units: Vec<u32> = (0..plan.ncolours())
            .flat_map(|c| plan.blocks_of_colour(c).iter().copied())
            .collect();
        let ncolours: Vec<u32> = (0..plan.nblocks()).map(|b| plan.block_element_colours(b)).collect();
        let upload = |name: &str, bytes: &[u8]| -> Result<Box<dyn DeviceBuffer>> {
            let b = api.new_buffer(name, bytes.len())?;
            b.upload(bytes)?;
            Ok(b)
        };
        let buffers = Arc::new(PlanBuffers {
            units: upload("plan blocks", bytemuck::cast_slice(&units))?,
            colours: upload("plan element colours", bytemuck::cast_slice(plan.element_colours()))?,
            ncolours: upload("plan colours per block", bytemuck::cast_slice(&ncolours))?,
        });
        // Plans the plan cache dropped (their subset is gone) are held here
        // only: free their device buffers too.
        plans.retain(|_, (p, _)| Arc::strong_count(p) > 1);
        plans.insert(key, (plan.clone(), buffers.clone()));
        Ok(buffers)
    }
}
