"""JSON API of the hardware catalog (read-only): the GPUs and fabrics the throughput model and
the planner know, with the source and date of every figure."""

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Path

from app.errors import NotFound
from app.hardware import catalog
from app.hardware.schemas import FabricList, FabricOut, GpuList, GpuOut

router = APIRouter(prefix="/api/v1/hardware", tags=["hardware"])

Name = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._+-]*$",
                           description="Exact catalog name, e.g. `H100 SXM 80GB`")]


def _gpu(name: str) -> GpuOut:
    source = catalog.gpu_sources()[name]
    return GpuOut(**asdict(catalog.load_gpus()[name]), short_name=catalog.short_name(name),
                  source=source.source, source_date=source.source_date)


def _fabric(name: str) -> FabricOut:
    source = catalog.fabric_sources()[name]
    return FabricOut(**asdict(catalog.load_fabrics()[name]), source=source.source,
                     source_date=source.source_date)


@router.get("/gpus", response_model=GpuList)
def list_gpus() -> GpuList:
    """Every GPU in the catalog, in catalog order."""
    return GpuList(items=[_gpu(name) for name in catalog.load_gpus()])


@router.get("/gpus/{name}", response_model=GpuOut)
def get_gpu(name: Name) -> GpuOut:
    """One GPU by its exact catalog name; 404 lists the known names."""
    if name not in catalog.load_gpus():
        raise NotFound(f"unknown GPU {name!r}; known: {', '.join(catalog.load_gpus())}")
    return _gpu(name)


@router.get("/fabrics", response_model=FabricList)
def list_fabrics() -> FabricList:
    """Every scale-up and scale-out fabric in the catalog, in catalog order."""
    return FabricList(items=[_fabric(name) for name in catalog.load_fabrics()])


@router.get("/fabrics/{name}", response_model=FabricOut)
def get_fabric(name: Name) -> FabricOut:
    """One fabric by its exact catalog name; 404 lists the known names."""
    if name not in catalog.load_fabrics():
        raise NotFound(f"unknown fabric {name!r}; known: {', '.join(catalog.load_fabrics())}")
    return _fabric(name)
